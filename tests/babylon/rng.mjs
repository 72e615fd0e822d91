// The seeded PRNG the reference generators share (mulberry32), so that every recording is the
// same on every run: regenerating a file and comparing its hash checks a harness change.

export function mulberry32(seed) {
    let a = seed >>> 0;
    return function () {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

export class Rng {
    constructor(seed) {
        this.next = mulberry32(seed);
    }
    // Numbers drawn for inputs pass through here; a generator may round them (see round9).
    round(v) {
        return v;
    }
    uniform(a, b) {
        return this.round(a + (b - a) * this.next());
    }
    int(a, b) {
        // inclusive
        return a + Math.floor(this.next() * (b - a + 1));
    }
    chance(p) {
        return this.next() < p;
    }
    pick(arr) {
        return arr[Math.floor(this.next() * arr.length)];
    }
    weighted(pairs) {
        let total = 0;
        for (const [, w] of pairs) total += w;
        let r = this.next() * total;
        for (const [v, w] of pairs) {
            if ((r -= w) < 0) return v;
        }
        return pairs[pairs.length - 1][0];
    }
    vec3(a, b) {
        return [this.uniform(a, b), this.uniform(a, b), this.uniform(a, b)];
    }
    quat() {
        // Shoemake uniform random unit quaternion, [x, y, z, w]
        const u1 = this.next(), u2 = this.next(), u3 = this.next();
        const s1 = Math.sqrt(1 - u1), s2 = Math.sqrt(u1);
        return [s1 * Math.sin(2 * Math.PI * u2), s1 * Math.cos(2 * Math.PI * u2), s2 * Math.sin(2 * Math.PI * u3),
            s2 * Math.cos(2 * Math.PI * u3)].map((v) => this.round(v));
    }
}

// Inputs rounded to 9 significant digits, so Babylon and the Python replay read the same numbers.
export const round9 = (v) => Number(v.toPrecision(9));
