"""Asset libraries: ``boneviewer batch`` over a folder of models, on a local pool or on Ray.

- ``job``: one model's work, a pure function of (its bytes, the options) run in a worker.
- ``run``: the run: which models to do (a second run skips unchanged ones), mapping the job
  over the local pool or Ray, writing each model's folder and the report.
- ``report``: REPORT/index.html and a page per model, from the templates beside it.
"""
