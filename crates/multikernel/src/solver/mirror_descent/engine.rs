//! The mirror-descent engine: Algorithm 2's iteration on the sampler's product kernels
//! with `K_theta` kept current (module docs of [`super`]), and [`solve`], which runs the
//! eta0 pilots and the returned run under the run contract.

use super::params::{auto_batch, EvalSchedule, Init, Sampling, SolverOptions, StepRule};
use super::sampler::{pos, PolySampler};
use crate::error::{Error, Result};
use crate::linalg::{axpy, dot, SpdFactor};
use crate::multiset::{orderings, DegreeUniform, IndexDistribution, MultiIndex};
use crate::run::{Control, Observer, RunInfo, RunRecorder, RunStatus, StepUnit};
use faer::{Accum, MatMut, MatRef, Par};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Instant;

/// Refactor when `mu / mu0` leaves `[1, 1 + REFACTOR_TAU]`.
const REFACTOR_TAU: f64 = 0.25;
/// `c` (the projection's common scale) is folded into `phi` when it falls below this.
const RENORMALIZE_BELOW: f64 = 1e-6;
/// Refactor after this many rank-one updates in any case (rounding hygiene).
const MAX_RANK_UPDATES: usize = 2000;
/// Rank-`b` Cholesky updates are used only while `b * RANK_UPDATE_RATIO <= n`; beyond, the
/// factor is recomputed, which is then cheaper (BENCHMARKS.md; `cargo bench --bench
/// mirror_descent -- rank_update`).
const RANK_UPDATE_RATIO: usize = 8;
/// Relative accuracy of the preconditioned conjugate gradient solve.
const PCG_TOL: f64 = 1e-10;
const PCG_MAX_ITER: usize = 60;

/// The objective of the returned iterate at some point of training.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub iteration: u64,
    /// Training seconds (pilots included, evaluations excluded).
    pub seconds: f64,
    pub objective: f64,
}

/// Counters of the linear algebra.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SolveStats {
    pub factorizations: u64,
    pub rank_one_updates: u64,
    pub pcg_iterations: u64,
    pub pcg_solves: u64,
}

/// Result of [`solve`].
#[derive(Debug, Clone)]
pub struct MdSolution {
    /// Weights of the kernels ever sampled (the returned iterate has unit l2 norm),
    /// largest first.
    pub terms: Vec<(MultiIndex, f64)>,
    /// Weight of every product kernel not in `terms` (0 with [`Init::Zero`]).
    pub uniform_weight: f64,
    /// `alpha = (K_theta + lambda I)^-1 y` at the returned weights.
    pub alpha: Vec<f64>,
    /// `J` at the returned weights.
    pub objective: f64,
    /// Iterations of the returned run.
    pub iterations: u64,
    pub eta0: f64,
    /// Training seconds (pilots included, evaluations excluded).
    pub seconds: f64,
    /// `(eta0, J after the pilot)` per candidate.
    pub pilot: Vec<(f64, f64)>,
    /// `J` of the returned iterate where the evaluation schedule computed it (after the
    /// pilots, at the schedule's points, and at the end), in training seconds: the curves of
    /// Figure 1.
    pub trace: Vec<Checkpoint>,
    /// The gradient vanished (nothing left to learn).
    pub converged: bool,
    pub stats: SolveStats,
}

/// `(J, alpha, touched terms, weight of the other kernels)` of the returned iterate.
type Evaluated = (f64, Vec<f64>, Vec<(MultiIndex, f64)>, f64);

/// A stopwatch that can leave evaluation time out.
struct Stopwatch {
    start: Instant,
    paused: f64,
}

impl Stopwatch {
    fn new() -> Self {
        Stopwatch {
            start: Instant::now(),
            paused: 0.0,
        }
    }
    fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64() - self.paused
    }
    fn pause<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.paused += t.elapsed().as_secs_f64();
        out
    }
}

#[derive(Debug, Clone)]
struct Coord {
    /// `theta_m = c * (base + phi)`.
    phi: f64,
    /// `sum_{k <= flush} w_k c_k phi^(k)` (the part above the common base).
    acc: f64,
    /// Value of `wc` at the last flush.
    mark: f64,
}

/// The state of one run of Algorithm 2.
#[derive(Clone)]
struct Engine<'a> {
    s: &'a PolySampler,
    y: &'a [f64],
    lambda: f64,
    n: usize,
    sampling: Sampling,
    eta0: f64,
    power: Option<f64>,
    decay: f64,
    batch: usize,
    coords: HashMap<MultiIndex, Coord>,
    /// Common weight of every kernel (in `phi` units): `theta_m = c (base + phi_m)`.
    base: f64,
    /// `sum_k w_k c_k base` up to `base_mark`.
    base_acc: f64,
    base_mark: f64,
    /// Number of product kernels `N`.
    n_kernels: f64,
    phi_norm2: f64,
    c: f64,
    k_phi: Vec<f64>,
    factor: Option<SpdFactor>,
    mu0: f64,
    rank_updates: usize,
    alpha: Vec<f64>,
    k_bar: Vec<f64>,
    w_sum: f64,
    /// `sum_k w_k c_k`.
    wc: f64,
    k: u64,
    rng: ChaCha8Rng,
    stats: SolveStats,
    converged: bool,
}

impl<'a> Engine<'a> {
    fn new(s: &'a PolySampler, y: &'a [f64], opts: &SolverOptions, eta0: f64) -> Engine<'a> {
        let n = s.points();
        let n_kernels = s.kernel_count();
        let base = match opts.init {
            Init::Zero => 0.0,
            Init::Uniform => 1.0 / n_kernels.sqrt(),
        };
        let mut k_phi = vec![0.0; n * n];
        if base > 0.0 {
            s.add_uniform_kernel(base, &mut k_phi);
        }
        Engine {
            s,
            y,
            lambda: opts.lambda,
            n,
            sampling: opts.sampling.clone(),
            eta0,
            power: opts.averaging_power,
            decay: opts.step_decay,
            batch: if opts.batch == 0 {
                auto_batch(n, n_kernels)
            } else {
                opts.batch
            },
            coords: HashMap::new(),
            base,
            base_acc: 0.0,
            base_mark: 0.0,
            n_kernels,
            phi_norm2: n_kernels * base * base,
            c: 1.0,
            k_phi,
            factor: None,
            mu0: opts.lambda,
            rank_updates: 0,
            alpha: y.iter().map(|v| v / opts.lambda).collect(),
            k_bar: if opts.averaging_power.is_some() {
                vec![0.0; n * n]
            } else {
                Vec::new()
            },
            w_sum: 0.0,
            wc: 0.0,
            k: 0,
            rng: ChaCha8Rng::seed_from_u64(opts.seed),
            stats: SolveStats::default(),
            converged: false,
        }
    }

    /// Draws `batch` coordinates and their ratios `q_m / s_m` (`None`: zero gradient).
    fn sample(&mut self) -> Option<Vec<(MultiIndex, f64)>> {
        let b = self.batch;
        let (prep, distinct) = self.s.prepare_with_distinct(&self.alpha);
        if !pos(distinct) || !distinct.is_finite() {
            return None;
        }
        match &self.sampling {
            Sampling::Importance => {
                let ms = self.s.draw_batch(&prep, &self.alpha, &mut self.rng, b)?;
                Some(
                    ms.into_iter()
                        .map(|m| {
                            let ratio = prep.total / (orderings(&m) * distinct);
                            (m, ratio)
                        })
                        .collect(),
                )
            }
            Sampling::Proportional => (0..b)
                .map(|_| {
                    self.s
                        .draw_proportional(&prep, &self.alpha, &mut self.rng, 10_000)
                        .map(|m| (m, 1.0))
                })
                .collect(),
            Sampling::Uniform => {
                let dist = DegreeUniform::uniform(self.s.base_count(), self.s.degree()).ok()?;
                Some(
                    (0..b)
                        .map(|_| {
                            let m = dist.draw(&mut self.rng);
                            let q = self.s.grad_mass(&m, &self.alpha) / distinct;
                            let p = dist.prob(&m);
                            (m, q / p)
                        })
                        .collect(),
                )
            }
            Sampling::User(dist) => Some(
                (0..b)
                    .map(|_| {
                        let m = dist.draw(&mut self.rng);
                        if m.len() > self.s.degree()
                            || m.iter().any(|&j| j as usize >= self.s.base_count())
                        {
                            return (Vec::new(), 0.0);
                        }
                        let p = dist.prob(&m);
                        let q = self.s.grad_mass(&m, &self.alpha) / distinct;
                        (m, if p > 0.0 { q / p } else { 0.0 })
                    })
                    .collect(),
            ),
        }
    }

    /// One iteration of Algorithm 2 (with a batch of coordinates). `Ok(false)` when the
    /// gradient vanished.
    fn step(&mut self) -> Result<bool> {
        let Some(samples) = self.sample() else {
            self.converged = true;
            return Ok(false);
        };
        self.k += 1;
        let k = self.k as f64;
        let step = self.eta0 * k.powf(-self.decay) / samples.len().max(1) as f64;
        let n = self.n;
        // Rank-one columns (column-major n x B) and their weights.
        let mut fcols: Vec<f64> = Vec::new();
        let mut fw: Vec<f64> = Vec::new();
        // Full-rank kernels and their weights, added once per distinct kernel below.
        let mut dense: Vec<(MultiIndex, f64)> = Vec::new();
        let mut changed = false;
        for (m, ratio) in samples {
            let dtheta = step * ratio;
            if !(dtheta > 0.0 && dtheta.is_finite()) {
                continue;
            }
            changed = true;
            let dphi = dtheta / self.c;
            let wc = self.wc;
            let d = m.len();
            let w = dphi * self.s.inv_rho2(d);
            match self.s.feature(&m) {
                Some(f) => {
                    fcols.extend_from_slice(&f);
                    fw.push(w);
                }
                None => dense.push((m.clone(), w)),
            }
            let coord = self.coords.entry(m).or_insert(Coord {
                phi: 0.0,
                acc: 0.0,
                mark: wc,
            });
            coord.acc += coord.phi * (wc - coord.mark);
            coord.mark = wc;
            self.phi_norm2 += dphi * (2.0 * (self.base + coord.phi) + dphi);
            coord.phi += dphi;
        }
        if !dense.is_empty() {
            // A batch often draws the same kernel several times: one pass over K_phi each.
            dense.sort_by(|a, b| a.0.cmp(&b.0));
            for group in dense.chunk_by(|a, b| a.0 == b.0) {
                let w: f64 = group.iter().map(|(_, w)| w).sum();
                self.s.add_kernel(&group[0].0, w, &mut self.k_phi);
            }
            self.factor = None;
        }
        if !fw.is_empty() {
            let b = fw.len();
            if b == 1 {
                for (t, &ft) in fcols.iter().enumerate() {
                    axpy(fw[0] * ft, &fcols, &mut self.k_phi[t * n..(t + 1) * n]);
                }
            } else {
                // K_phi += F diag(w) F^T in one pass.
                let mut fwt = vec![0.0; fcols.len()];
                for ((out, col), &w) in fwt.chunks_exact_mut(n).zip(fcols.chunks_exact(n)).zip(&fw)
                {
                    for (o, v) in out.iter_mut().zip(col) {
                        *o = v * w;
                    }
                }
                faer::linalg::matmul::matmul(
                    MatMut::from_column_major_slice_mut(&mut self.k_phi, n, n),
                    Accum::Add,
                    MatRef::from_column_major_slice(&fcols, n, b),
                    MatRef::from_column_major_slice(&fwt, n, b).transpose(),
                    1.0,
                    Par::Seq,
                );
            }
            if b.saturating_mul(RANK_UPDATE_RATIO) > n {
                // A rank-b update costs more than factoring afresh (see RANK_UPDATE_RATIO).
                self.factor = None;
            } else if let Some(fac) = self.factor.as_mut() {
                if fac.rank_update(&fcols, &fw).is_err() {
                    self.factor = None;
                } else {
                    self.rank_updates += b;
                    self.stats.rank_one_updates += b as u64;
                }
            }
        }
        if changed {
            // Projection onto the positive part of the unit l2 ball: a scaling.
            let norm_phi = self.phi_norm2.sqrt();
            if self.c * norm_phi > 1.0 {
                self.c = 1.0 / norm_phi;
            }
            self.update_alpha()?;
        }
        if let Some(p) = self.power {
            let wk = k.powf(p);
            let a = wk * self.c;
            axpy(a, &self.k_phi, &mut self.k_bar);
            self.w_sum += wk;
            self.wc += a;
        }
        Ok(true)
    }

    /// Folds `c` into `phi` (and `K_phi`), flushing the per-kernel averages.
    fn renormalize(&mut self) {
        if self.c == 1.0 {
            return;
        }
        let c = self.c;
        let wc = self.wc;
        for coord in self.coords.values_mut() {
            coord.acc += coord.phi * (wc - coord.mark);
            coord.mark = wc;
            coord.phi *= c;
        }
        self.base_acc += self.base * (wc - self.base_mark);
        self.base_mark = wc;
        self.base *= c;
        self.phi_norm2 *= c * c;
        self.k_phi.iter_mut().for_each(|v| *v *= c);
        self.c = 1.0;
    }

    /// Factors `K_phi + mu I`, `mu = lambda / c`, and solves for `alpha` directly. `c` is
    /// folded into `phi` only when it has drifted far from 1 (a pass over every touched
    /// kernel), not at every factorization.
    fn refactor(&mut self) -> Result<()> {
        if !(RENORMALIZE_BELOW..=1.0).contains(&self.c) {
            self.renormalize();
        }
        let n = self.n;
        let mu = self.lambda / self.c;
        let f = SpdFactor::new(MatRef::from_column_major_slice(&self.k_phi, n, n), mu)?;
        self.stats.factorizations += 1;
        let inv_c = 1.0 / self.c;
        self.alpha = f.solve(self.y).into_iter().map(|v| v * inv_c).collect();
        self.factor = Some(f);
        self.mu0 = mu;
        self.rank_updates = 0;
        Ok(())
    }

    /// `alpha = (c K_phi + lambda I)^-1 y`.
    fn update_alpha(&mut self) -> Result<()> {
        let mu = self.lambda / self.c;
        let fresh = match &self.factor {
            None => false,
            Some(_) => {
                mu >= self.mu0 * (1.0 - 1e-12)
                    && mu <= self.mu0 * (1.0 + REFACTOR_TAU)
                    && self.rank_updates < MAX_RANK_UPDATES
            }
        };
        if !fresh {
            return self.refactor();
        }
        let b: Vec<f64> = self.y.iter().map(|v| v / self.c).collect();
        match self.pcg(&b, mu) {
            Some(x) => {
                self.alpha = x;
                Ok(())
            }
            None => self.refactor(),
        }
    }

    /// Conjugate gradients on `(K_phi + mu I) x = b` preconditioned with the factor of
    /// `K_phi + mu0 I`; `None` if it does not converge.
    fn pcg(&mut self, b: &[f64], mu: f64) -> Option<Vec<f64>> {
        let n = self.n;
        let fac = self.factor.as_ref()?;
        let delta = mu - self.mu0;
        let mut x = fac.solve(b);
        if delta == 0.0 {
            self.stats.pcg_solves += 1;
            return Some(x);
        }
        let kmat = MatRef::from_column_major_slice(&self.k_phi, n, n);
        let apply = |v: &[f64], out: &mut Vec<f64>| {
            out.clear();
            out.resize(n, 0.0);
            faer::linalg::matmul::matmul(
                MatMut::from_column_major_slice_mut(out, n, 1),
                Accum::Replace,
                kmat,
                MatRef::from_column_major_slice(v, n, 1),
                1.0,
                Par::Seq,
            );
            for (o, vi) in out.iter_mut().zip(v) {
                *o += mu * vi;
            }
        };
        let mut ax = Vec::with_capacity(n);
        apply(&x, &mut ax);
        let mut r: Vec<f64> = b.iter().zip(&ax).map(|(bi, ai)| bi - ai).collect();
        let mut z = fac.solve(&r);
        let mut p = z.clone();
        let mut rz = dot(&r, &z);
        let mut ap = Vec::with_capacity(n);
        for _ in 0..PCG_MAX_ITER {
            self.stats.pcg_iterations += 1;
            let xnorm = dot(&x, &x).sqrt();
            if dot(&z, &z).sqrt() <= PCG_TOL * xnorm {
                self.stats.pcg_solves += 1;
                return Some(x);
            }
            apply(&p, &mut ap);
            let pap = dot(&p, &ap);
            if !pos(pap) {
                return None;
            }
            let a = rz / pap;
            for i in 0..n {
                x[i] += a * p[i];
                r[i] -= a * ap[i];
            }
            z = fac.solve(&r);
            let rz_new = dot(&r, &z);
            let beta = rz_new / rz;
            rz = rz_new;
            for i in 0..n {
                p[i] = z[i] + beta * p[i];
            }
        }
        None
    }

    /// `sum_k w_k theta^(k)` per touched kernel and for every other kernel (or the
    /// current `theta` without averaging).
    fn weights(&self) -> (Vec<(MultiIndex, f64)>, f64) {
        let base = match self.power {
            Some(_) => self.base_acc + self.base * (self.wc - self.base_mark),
            None => self.c * self.base,
        };
        let mut terms: Vec<(MultiIndex, f64)> = self
            .coords
            .iter()
            .map(|(m, c)| {
                let v = match self.power {
                    Some(_) => c.acc + c.phi * (self.wc - c.mark),
                    None => self.c * c.phi,
                };
                (m.clone(), base + v)
            })
            .filter(|(_, v)| *v > 0.0)
            .collect();
        // A fixed order (the map's is random), so sums over the terms and the saved model
        // are the same bit for bit from run to run.
        terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        (terms, base)
    }

    /// `K_theta` of the returned iterate (unit norm), its touched terms and the weight of
    /// every other kernel.
    fn returned(&self) -> (Vec<f64>, Vec<(MultiIndex, f64)>, f64) {
        let (mut terms, mut base) = self.weights();
        let others = (self.n_kernels - terms.len() as f64).max(0.0);
        let norm = (terms.iter().map(|(_, v)| v * v).sum::<f64>() + others * base * base).sqrt();
        if !pos(norm) {
            return (vec![0.0; self.n * self.n], Vec::new(), 0.0);
        }
        terms.iter_mut().for_each(|(_, v)| *v /= norm);
        base /= norm;
        let k: Vec<f64> = match self.power {
            Some(_) => self.k_bar.iter().map(|v| v / norm).collect(),
            None => self.k_phi.iter().map(|v| v * self.c / norm).collect(),
        };
        (k, terms, base)
    }

    /// `J` and `alpha` of the returned iterate.
    fn evaluate_full(&self) -> Result<Evaluated> {
        let (k, terms, base) = self.returned();
        let n = self.n;
        let f = SpdFactor::new(MatRef::from_column_major_slice(&k, n, n), self.lambda)?;
        let alpha = f.solve(self.y);
        let j = 0.5 * self.lambda * dot(self.y, &alpha);
        Ok((j, alpha, terms, base))
    }

    fn evaluate(&self) -> Result<f64> {
        Ok(self.evaluate_full()?.0)
    }
}

/// Runs Algorithm 2 on the training targets `y` (already standardized) with the product
/// kernels of `sampler`.
///
/// A step is one iteration of the returned run: `observer` sees every step, with the
/// objective of the returned iterate when `opts.eval` evaluates it, and is polled before every
/// iteration (the pilots' included). The solution's trace holds those evaluations (and the
/// final one) in training seconds; the run information's seconds are wall-clock. See the
/// module docs for the statuses; a cancelled run returns the iterate reached (during the
/// pilots: the best pilot finished, else the one running).
pub fn solve(
    sampler: &PolySampler,
    y: &[f64],
    opts: &SolverOptions,
    observer: &dyn Observer,
) -> Result<(MdSolution, RunInfo)> {
    opts.validate()?;
    if y.len() != sampler.points() {
        return Err(Error::shape(
            "targets (one per training point)",
            sampler.points(),
            y.len(),
        ));
    }
    if y.iter().any(|v| !v.is_finite()) {
        return Err(Error::data("the targets contain a non-finite value"));
    }
    let mut clock = Stopwatch::new();
    let out_of_time =
        |clock: &Stopwatch, limit: Option<f64>| limit.is_some_and(|s| clock.elapsed() >= s);
    let mut rec = RunRecorder::new(
        StepUnit::Iteration,
        (opts.max_iter > 0).then_some(opts.max_iter),
    );
    let mut cancelled = false;

    // Pilot phase.
    let mut pilot = Vec::new();
    let mut engine = match &opts.step {
        StepRule::Fixed(eta0) => Engine::new(sampler, y, opts, *eta0),
        StepRule::Pilot { grid, fraction } => {
            let per = fraction / grid.len() as f64;
            let iters = if opts.max_iter == 0 {
                u64::MAX
            } else {
                ((opts.max_iter as f64 * per).ceil() as u64).max(1)
            };
            let secs = opts.max_seconds.map(|s| s * per);
            let mut best: Option<(f64, Engine)> = None;
            for &eta0 in grid {
                let mut e = Engine::new(sampler, y, opts, eta0);
                let t0 = clock.elapsed();
                while e.k < iters && !secs.is_some_and(|s| clock.elapsed() - t0 >= s) {
                    if observer.should_stop() {
                        cancelled = true;
                        break;
                    }
                    if !e.step()? {
                        break;
                    }
                }
                if cancelled {
                    if best.is_none() {
                        best = Some((f64::NAN, e));
                    }
                    break;
                }
                let j = e.evaluate()?;
                pilot.push((eta0, j));
                if best.as_ref().is_none_or(|(bj, _)| j < *bj) {
                    best = Some((j, e));
                }
            }
            best.expect("non-empty grid").1
        }
    };
    rec.set_steps(engine.k);

    let mut trace = Vec::new();
    // Evaluates the returned iterate (evaluation time is not training time).
    let record =
        |engine: &Engine, clock: &mut Stopwatch, trace: &mut Vec<Checkpoint>| -> Result<f64> {
            let seconds = clock.elapsed();
            let j = clock.pause(|| engine.evaluate())?;
            trace.push(Checkpoint {
                iteration: engine.k,
                seconds,
                objective: j,
            });
            Ok(j)
        };
    if opts.eval != EvalSchedule::End && !cancelled {
        record(&engine, &mut clock, &mut trace)?;
    }
    let mut next_iter = match opts.eval {
        EvalSchedule::Iterations(k) => engine.k + k.max(1),
        _ => u64::MAX,
    };
    let mut next_sec = match opts.eval {
        EvalSchedule::Seconds(s) => clock.elapsed() + s,
        EvalSchedule::Geometric { first, .. } => first.max(clock.elapsed() * 1.0001),
        _ => f64::INFINITY,
    };
    let iter_cap = if opts.max_iter == 0 {
        u64::MAX
    } else {
        opts.max_iter
    };
    while !cancelled && engine.k < iter_cap && !out_of_time(&clock, opts.max_seconds) {
        if observer.should_stop() {
            cancelled = true;
            break;
        }
        if !engine.step()? {
            break;
        }
        let mut objective = None;
        if engine.k >= next_iter {
            objective = Some(record(&engine, &mut clock, &mut trace)?);
            if let EvalSchedule::Iterations(k) = opts.eval {
                next_iter += k.max(1);
            }
        } else if clock.elapsed() >= next_sec {
            objective = Some(record(&engine, &mut clock, &mut trace)?);
            match opts.eval {
                EvalSchedule::Seconds(s) => next_sec = clock.elapsed() + s,
                EvalSchedule::Geometric { factor, .. } => {
                    while next_sec <= clock.elapsed() {
                        next_sec *= factor.max(1.0001);
                    }
                }
                _ => {}
            }
        }
        if clock.pause(|| rec.step(objective, observer)) == Control::Stop {
            cancelled = true;
            break;
        }
    }
    let status = if engine.converged {
        RunStatus::Converged
    } else if engine.k >= iter_cap {
        if opts.max_seconds.is_some() {
            RunStatus::IterationLimit
        } else {
            RunStatus::Completed
        }
    } else if cancelled {
        RunStatus::Cancelled
    } else {
        RunStatus::TimeBudget
    };
    let seconds = clock.elapsed();
    let (objective, alpha, mut terms, uniform_weight) = engine.evaluate_full()?;
    terms.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    if trace.last().is_none_or(|c| c.iteration != engine.k) {
        trace.push(Checkpoint {
            iteration: engine.k,
            seconds,
            objective,
        });
    }
    rec.set_objective(objective);
    let solution = MdSolution {
        terms,
        uniform_weight,
        alpha,
        objective,
        iterations: engine.k,
        eta0: engine.eta0,
        seconds,
        pilot,
        trace,
        converged: engine.converged,
        stats: engine.stats,
    };
    Ok((solution, rec.finish(status)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::mirror_descent::tests::rank_one_sampler;

    #[test]
    fn pcg_solves_match_direct_solves() {
        // After every step the maintained alpha equals a direct solve at the current theta,
        // on the rank-update + PCG path (batch 2 against n = 25) and on the refactoring path
        // (batch 10: 10 * RANK_UPDATE_RATIO > 25).
        for batch in [2, 10] {
            check_alpha_after_every_step(batch);
        }
    }

    fn check_alpha_after_every_step(batch: usize) {
        let (s, y, _) = rank_one_sampler(25, 3, 2, 2);
        let opts = SolverOptions {
            lambda: 1e-4,
            averaging_power: None,
            batch,
            ..SolverOptions::default()
        };
        let mut e = Engine::new(&s, &y, &opts, 0.5);
        for _ in 0..200 {
            e.step().unwrap();
            let n = 25;
            let kt: Vec<f64> = e.k_phi.iter().map(|v| v * e.c).collect();
            let f = SpdFactor::new(MatRef::from_column_major_slice(&kt, n, n), 1e-4).unwrap();
            let a = f.solve(&y);
            for (p, q) in a.iter().zip(&e.alpha) {
                assert!((p - q).abs() < 1e-6 * (1.0 + p.abs()), "{p} vs {q}");
            }
            let norm = e.c * e.phi_norm2.sqrt();
            assert!(norm <= 1.0 + 1e-12);
        }
        if batch * RANK_UPDATE_RATIO <= 25 {
            assert!(e.stats.pcg_solves > 0);
            assert!(e.stats.rank_one_updates > 0);
        } else {
            assert_eq!(e.stats.rank_one_updates, 0);
            assert!(e.stats.factorizations >= 200);
        }
    }
}
