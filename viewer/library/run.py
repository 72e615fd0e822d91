"""A library run: the models under a folder, each given to ``job.model_job`` by a local pool
of processes (pebble: per-task timeouts, a crashed worker replaced) or by Ray, and the results
written as REPORT/<model's path>/ folders, REPORT/report.json and the HTML pages.

A model whose bytes (its resources included) and options did not change since the report's
last run is skipped; ``force`` redoes every model.
"""

from __future__ import annotations

import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from ..errors import ViewerError
from ..files import replace_folder, temporary_folder, write_file
from .job import BatchOptions, job_key, model_job, model_sources

REPORT_JSON = "report.json"
RAY_EXTRA = "pip install 'boneviewer[ray]'"
WINDOW = 4  # jobs handed to the pool or Ray per worker (per CPU) at a time
GRACE = 10.0  # seconds past --timeout before the pool kills a worker the job's own alarm did not stop


@dataclass
class Model:
    path: Path
    name: str          # its path relative to the library, which names its folder in the report
    key: str = ""
    row: dict | None = None


def plan(root: Path, out: Path, options: BatchOptions, force: bool) -> tuple[list, list]:
    """(models to do, models whose previous row stands), in the library's order."""
    from ..checks import model_files

    previous = {}
    if not force:
        try:
            previous = {row["file"]: row for row in json.loads((out / REPORT_JSON).read_text())["models"]}
        except (OSError, ValueError, KeyError, TypeError):
            previous = {}
    todo, kept = [], []
    for path in model_files(root):
        model = Model(path, path.relative_to(root).as_posix())
        try:
            model.key = job_key(model_sources(path), options)
        except OSError as error:
            model.row = failed_row(model, f"cannot read it: {error.strerror or error}")
            kept.append(model)
            continue
        old = previous.get(model.name)
        if old is not None and old.get("key") == model.key and (out / model.name).is_dir():
            model.row = old
            kept.append(model)
        else:
            todo.append(model)
    return todo, kept


def failed_row(model: Model, error: str) -> dict:
    return {"file": model.name, "key": model.key, "status": "failed", "error": error, "bones": 0, "vertices": 0,
            "clips": [], "errors": 0, "warnings": 0, "infos": 0, "outputs": []}


def timed_job(name: str, sources: dict, options: BatchOptions, timeout: float | None) -> dict:
    """``model_job`` stopped by an alarm after ``timeout`` seconds (a failed row that says so).

    Each worker is one process on one core (the pool and Ray run one per core): llvmpipe's own
    rasterizer threads would only compete with the other workers, so it gets one, unless the
    user set LP_NUM_THREADS (read when the worker's GL context is made, in its first job)."""
    os.environ.setdefault("LP_NUM_THREADS", "1")
    if timeout is None:
        return model_job(name, sources, options)

    def expire(signum, frame):
        raise TimeoutError(f"timed out after {timeout:g} s")

    try:
        previous = signal.signal(signal.SIGALRM, expire)
    except ValueError:  # not the process's main thread: the pool's or Ray's own limit applies
        return model_job(name, sources, options)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return model_job(name, sources, options)
    except TimeoutError as error:
        return {"row": {"status": "failed", "error": str(error)}, "outputs": {}}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def map_local(models: list, options: BatchOptions, workers: int, timeout: float | None):
    """Yield (model, job result or error text) as the pool finishes them."""
    tasks = ((model, (model.path.name, model_sources(model.path), options, timeout)) for model in models)
    yield from pool_map(timed_job, tasks, workers, None if timeout is None else timeout + GRACE,
                        f"timed out after {timeout:g} s (its worker was stopped)" if timeout is not None else "")


def map_ray(models: list, options: BatchOptions, address: str | None, timeout: float | None):
    """Yield (model, job result or error text) as Ray's tasks finish: each model one task, on
    a local Ray runtime (address None) or on the cluster at ``address``."""
    tasks = ((model, (model.path.name, model_sources(model.path), options, timeout)) for model in models)
    yield from ray_map(timed_job, tasks, address)


def pool_map(function, tasks, workers: int, timeout: float | None = None, timed_out: str = ""):
    """Yield (key, ``function(*arguments)`` or error text) for each (key, arguments) of ``tasks``
    as a local pool of ``workers`` processes (pebble: a crashed worker is replaced) finishes
    them; a task running past ``timeout`` seconds is stopped with its worker and yields
    ``timed_out``. At most WINDOW tasks per worker are handed over at a time, so a long list's
    arguments are not all held at once. A worker process lives for the whole map: what it keeps
    in module globals (a GL context, loaded models) serves every task it is given."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, TimeoutError as FutureTimeout, wait

    from pebble import ProcessPool
    from pebble.common import ProcessExpired

    waiting = iter(tasks)
    # Workers start from a fresh fork server, not a fork of this process: a process that has
    # used GL (an EGL context, llvmpipe's threads) cannot be forked safely, and its child hangs
    # in its first draw (seen with the test suite, where one process renders and then maps).
    with ProcessPool(max_workers=workers, context=multiprocessing.get_context("forkserver")) as pool:
        futures = {}

        def hand_over():
            task = next(waiting, None)
            if task is not None:
                key, arguments = task
                futures[pool.schedule(function, args=arguments, timeout=timeout)] = key

        for _ in range(WINDOW * workers):
            hand_over()
        try:
            while futures:
                done, _ = wait(futures, return_when=FIRST_COMPLETED)
                for future in done:
                    key = futures.pop(future)
                    hand_over()
                    try:
                        result = future.result()
                    except FutureTimeout:
                        result = timed_out
                    except ProcessExpired as error:
                        result = f"its worker crashed (exit status {error.exitcode})"
                    except Exception as error:  # noqa: BLE001 - a task that could not run is that task's failure
                        result = f"its worker failed: {type(error).__name__}: {error}"
                    yield key, result
        except BaseException:  # the caller stopped early (an error, Ctrl+C): the tasks handed over are not waited for
            pool.stop()
            raise


def ray_map(function, tasks, address: str | None):
    """Yield (key, ``function(*arguments)`` or error text) for each (key, arguments) of ``tasks``
    as Ray's tasks finish: each one task of one CPU, on a local Ray runtime (address None) or on
    the cluster at ``address``; at most WINDOW tasks per CPU of the cluster handed over at a time."""
    try:
        import ray
    except ImportError:
        raise ViewerError(f"--ray needs Ray: {RAY_EXTRA}") from None
    started_here = not ray.is_initialized()
    if started_here:
        try:
            if address is None:
                ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False,
                         configure_logging=False)
            else:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
        except Exception as error:  # noqa: BLE001 - Ray's many connection errors: one line for the user
            raise ViewerError(f"--ray {address or ''}: cannot start or reach Ray ({error})".replace("  ", " ")) from None
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(function)
        waiting, pending = iter(tasks), {}

        def hand_over():
            task = next(waiting, None)
            if task is not None:
                key, arguments = task
                pending[remote.remote(*arguments)] = key

        for _ in range(WINDOW * max(1, int(ray.cluster_resources().get("CPU", 1)))):
            hand_over()
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                key = pending.pop(ref)
                hand_over()
                try:
                    yield key, ray.get(ref)
                except ray.exceptions.WorkerCrashedError:
                    yield key, "its worker crashed"
                except ray.exceptions.RayError as error:
                    yield key, f"its task failed: {' '.join(str(error).split())[:300]}"
    finally:
        if started_here:
            ray.shutdown()


def write_model(out: Path, model: Model, result) -> dict:
    """The model's folder, written whole (a temporary folder renamed into place), and its row."""
    if isinstance(result, str):
        row, outputs = failed_row(model, result), {}
    else:
        row = {"file": model.name, "key": model.key, "bones": 0, "vertices": 0, "clips": [], "errors": 0,
               "warnings": 0, "infos": 0, **result["row"]}
        outputs = result["outputs"]
        row["outputs"] = sorted(outputs)
    folder = out / model.name
    folder.parent.mkdir(parents=True, exist_ok=True)
    temp = temporary_folder(folder)
    for name, data in outputs.items():
        write_file(temp / name, data)
    replace_folder(temp, folder)
    return row


def write_json(path: Path, data) -> None:
    """A JSON file written whole (temp file + rename)."""
    write_file(path, json.dumps(data, indent=1) + "\n")
