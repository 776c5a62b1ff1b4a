//! The `q = 1` working-set problem (mao-tsang problem (6)) as the MKL saddle point
//!
//! ```text
//! min_{mu in simplex} J(mu),   J(mu) = max_{alpha in A} b^T alpha - sum_j mu_j h_j(alpha),
//! h_j(alpha) = 1/2 alpha^T Q^j alpha,   A = {alpha >= 0, sum_r alpha_r <= C},
//! ```
//!
//! whose value is that of the QCQP `max_{alpha in A} b^T alpha - max_j h_j(alpha)` (min and max
//! swap: the Lagrangian is concave in alpha, linear in mu). `J` is convex with gradient
//! `-h(alpha*(mu))` (Danskin), and each `J(mu)` is the plain l2 working-set dual with the Gram
//! `sum_j mu_j Q^j`, solved by the warm-started pairwise QP of [`super::super::qp`].
//!
//! The template weights move by projected gradient steps on the simplex, `mu <- P(mu + eta h)`
//! (`P` the Euclidean projection), with an Armijo backtracking line search on `J` along the
//! projection arc and Barzilai-Borwein step sizes (spectral projected gradient, Birgin,
//! Martinez & Raydan 2000; SimpleMKL's scheme, Rakotomamonjy et al. 2008, with the projection
//! in place of its reduced gradient). Templates reach exactly 0 and come back when their
//! `h_j` rises. The step is carried to the next solve. Alternating the QP with the
//! closed-form best response in `mu` (a vertex of the simplex) does not converge; these steps
//! do, since each is a descent step of the convex `J`. Every point gives the duality gap
//!
//! ```text
//! J(mu) - D(alpha*(mu)) = max_j h_j - sum_j mu_j h_j >= 0,   D(alpha) = b^T alpha - max_j h_j,
//! ```
//!
//! and the loop stops when it is at most `tol` times `J`. A new cut only appends a
//! coordinate to `alpha` (at 0), so the previous `(alpha, mu)` warm-starts the next solve.
//!
//! # Other block norms (problem (11))
//!
//! The same scheme solves every `q > 1` ([`Geometry`]). The conjugate of the squared block
//! norm has a variational form over template weights `theta >= 0` in the unit `l_r` ball
//! (Micchelli & Pontil 2005; Kloft et al. 2011):
//!
//! * `1 < q < 2`: `1/2 (sum_j ||v_j||^q*)^(2/q*) = max_theta 1/2 sum_j theta_j ||v_j||^2`,
//!   `r = q / (2 - q)`, so the problem is `min_theta J(theta)` with `J` as above and the Gram
//!   `sum_j theta_j Q^j` (`q = 1` is `r = 1`, the simplex);
//! * `q > 2`: `1/2 (sum_j ||v_j||^q*)^(2/q*) = min_theta 1/2 sum_j ||v_j||^2 / theta_j`,
//!   `r = q / (q - 2)`, so the problem is `max_theta J(theta)`, `J(theta) = max_alpha b^T alpha
//!   - sum_j h_j / theta_j`, jointly concave, with the Gram `sum_j Q^j / theta_j`.
//!
//! In both the step is the projected gradient step on `theta` (the gradient `-h_j` or
//! `h_j / theta_j^2`) with the Armijo search on `J`, and the primal is `w_j = f_j sum_r
//! alpha_r a_r^(j)` with `f_j` the Gram's weight. The bounds are the dual value
//! `D(alpha) = b^T alpha - 1/2 (sum_j (2 h_j)^(q*/2))^(2/q*)` below and, above, `J(theta)`
//! (`q < 2`) or the primal value at `alpha`'s own factors (`q > 2`).

use super::super::qp;
use super::grams::PackedGrams;
use super::{blocks, primal_factors, primal_value, project_onto_sum};

/// Where the template weights live and how they weigh the Grams, for block norm `q`
/// (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Geometry {
    q: f64,
}

impl Geometry {
    /// Block norm `q >= 1`, finite, not 2 (`q = 2` has no template weights to learn).
    pub(crate) fn new(q: f64) -> Geometry {
        debug_assert!(q.is_finite() && q >= 1.0 && q != 2.0);
        Geometry { q }
    }

    /// The exponent `r` of the ball `||theta||_r <= 1`.
    fn r(&self) -> f64 {
        if self.q < 2.0 {
            self.q / (2.0 - self.q)
        } else {
            self.q / (self.q - 2.0)
        }
    }

    /// Whether the Gram is `sum_j Q^j / theta_j` (`q > 2`) rather than `sum_j theta_j Q^j`.
    fn divides(&self) -> bool {
        self.q > 2.0
    }

    /// The Gram's weight `f_j` of each template (also the primal's factor).
    pub(crate) fn factors(&self, theta: &[f64]) -> Vec<f64> {
        if self.divides() {
            theta.iter().map(|t| 1.0 / t.max(THETA_FLOOR)).collect()
        } else {
            theta.to_vec()
        }
    }

    /// The uniform point of the ball's boundary.
    fn start(&self, groups: usize) -> Vec<f64> {
        vec![(groups as f64).powf(-1.0 / self.r()); groups]
    }

    /// The Euclidean projection onto `{theta >= 0, ||theta||_r <= 1}` (`r = 1`: onto the
    /// simplex, where the optimum lies); for `q > 2` the weights stay above a floor.
    fn project(&self, x: &mut [f64]) {
        let r = self.r();
        if r == 1.0 {
            project_onto_sum(x, 1.0);
        } else {
            project_onto_lr_ball(x, r);
        }
        if self.divides() {
            x.iter_mut().for_each(|v| *v = v.max(THETA_FLOOR));
        }
    }

    /// `D(alpha) = b^T alpha - 1/2 (sum_j (2 h_j)^(q*/2))^(2/q*)` (`q = 1`: `b^T alpha -
    /// max_j h_j`).
    fn dual_value(&self, lin: f64, h: &[f64]) -> f64 {
        if self.q == 1.0 {
            lin - h.iter().cloned().fold(0.0, f64::max)
        } else {
            let qs = self.q / (self.q - 1.0);
            let s: f64 = h.iter().map(|v| (2.0 * v).max(0.0).powf(0.5 * qs)).sum();
            lin - 0.5 * s.powf(2.0 / qs)
        }
    }
}

/// `q > 2`: the template weights' floor (the Gram divides by them).
const THETA_FLOOR: f64 = 1e-12;

/// The Euclidean projection of `x` onto `{y >= 0, sum_j y_j^r <= 1}`, `r > 1`: the positive
/// part if it is inside, else `y_j = t_j(lambda)` with `y + lambda r y^(r-1) = x_j` per
/// coordinate and `lambda` found by bisection so that `sum y^r = 1` (`r = 2`: a scaling).
pub(crate) fn project_onto_lr_ball(x: &mut [f64], r: f64) {
    x.iter_mut().for_each(|v| *v = v.max(0.0));
    let norm_r = |y: &[f64]| y.iter().map(|v| v.powf(r)).sum::<f64>();
    if norm_r(x) <= 1.0 {
        return;
    }
    if r == 2.0 {
        let n = norm_r(x).sqrt();
        x.iter_mut().for_each(|v| *v /= n);
        return;
    }
    // y solves y + lambda r y^(r-1) = x_j on [0, x_j] (increasing in y): bisection.
    let coordinate = |xj: f64, lambda: f64| -> f64 {
        let (mut lo, mut hi) = (0.0, xj);
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if mid + lambda * r * mid.powf(r - 1.0) > xj {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        0.5 * (lo + hi)
    };
    let at = |lambda: f64| -> Vec<f64> { x.iter().map(|&v| coordinate(v, lambda)).collect() };
    let (mut lo, mut hi) = (0.0, 1.0);
    while norm_r(&at(hi)) > 1.0 {
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if norm_r(&at(mid)) > 1.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let y = at(hi);
    x.copy_from_slice(&y);
}

/// The pairwise QP stops when its own gap is this share of the saddle point's tolerance.
const QP_SHARE: f64 = 0.05;

/// Where [`solve`] starts: the last solve's multipliers (padded with zeros for new cuts),
/// template weights and step (any may be empty or 0: zeros, uniform weights, a step on the
/// problem's scale).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Warm<'a> {
    pub alpha: &'a [f64],
    pub mu: &'a [f64],
    pub eta: f64,
}

/// When [`solve`] stops: the gap at most `tol` times `J(mu)` or at most `abs_tol`, or after
/// `max_steps` line searches.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stop {
    pub tol: f64,
    pub abs_tol: f64,
    pub max_steps: usize,
}

/// The result of [`solve`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SaddleSolution {
    /// The multipliers, optimal for the l2 dual at `mu` (to the QP's tolerance).
    pub alpha: Vec<f64>,
    /// The template weights (a point of the simplex).
    pub mu: Vec<f64>,
    /// `alpha^T Q^j alpha` for every template at the returned `alpha`.
    pub quad_forms: Vec<f64>,
    /// `J(mu)`, an upper bound of the problem's value (the QP's gap added).
    pub upper: f64,
    /// `D(alpha)`, a lower bound of the problem's value.
    pub lower: f64,
    /// Mirror steps taken (accepted).
    pub steps: usize,
    /// Pairwise QPs solved (line-search trials included).
    pub qp_solves: usize,
    /// Whether the gap reached the tolerance.
    pub converged: bool,
    /// The step size to start the next solve from.
    pub eta: f64,
}

/// What one point `theta` gives: the QP's `alpha`, `h`, the objective `phi` the steps
/// minimize (`J(theta)`, or `-J(theta)` for `q > 2`), its gradient, and the bounds.
struct Point {
    theta: Vec<f64>,
    alpha: Vec<f64>,
    /// `1/2 alpha^T Q^j alpha` for every template.
    h: Vec<f64>,
    /// `-grad phi`: `h_j`, or `h_j / theta_j^2` for `q > 2`.
    descent: Vec<f64>,
    phi: f64,
    upper: f64,
    lower: f64,
    /// The QP's own gap (how far the QP's value may be from `J(theta)`).
    qp_gap: f64,
}

impl Point {
    fn gap(&self) -> f64 {
        (self.upper - self.lower).max(0.0)
    }
}

/// The problem a solve works on.
struct Problem<'a> {
    grams: &'a PackedGrams,
    b: &'a [f64],
    c: f64,
    geometry: Geometry,
}

impl Problem<'_> {
    fn evaluate(&self, theta: Vec<f64>, warm: &[f64], qp_tol: f64) -> Point {
        let g = self.geometry;
        let f = g.factors(&theta);
        let k = self.grams.combine(&f);
        let sol = qp::solve(&k, self.b, self.c, warm, qp_tol, 10_000_000);
        let h: Vec<f64> = self
            .grams
            .quad_forms(&sol.alpha)
            .into_iter()
            .map(|v| 0.5 * v)
            .collect();
        let lin: f64 = self.b.iter().zip(&sol.alpha).map(|(x, y)| x * y).sum();
        let mixed: f64 = h.iter().zip(&f).map(|(x, m)| x * m).sum();
        let qp_gap = sol.gap.max(0.0);
        // The QP's value lies in [J(theta) - gap, J(theta)].
        let qp_value = lin - mixed;
        let dual = g.dual_value(lin, &h);
        let (phi, upper, lower, descent) = if g.divides() {
            // max_theta J: J(theta) >= the QP's value is a lower bound; the primal at
            // alpha's own factors an upper one.
            let bl = blocks(self.grams, &sol.alpha);
            let norms: Vec<f64> = bl.iter().map(|k| k.norm).collect();
            let upper = primal_value(&bl, &primal_factors(&norms, g.q), self.b, self.c, g.q);
            let descent = h.iter().zip(&theta).map(|(hj, t)| hj / (t * t)).collect();
            (-qp_value, upper, dual.max(qp_value), descent)
        } else {
            (qp_value + qp_gap, qp_value + qp_gap, dual, h.clone())
        };
        Point {
            theta,
            alpha: sol.alpha,
            h,
            descent,
            phi,
            upper,
            lower,
            qp_gap,
        }
    }
}

/// The projected gradient step of size `eta` from `theta` along `descent` (module docs).
fn projected_step(geometry: &Geometry, theta: &[f64], descent: &[f64], eta: f64) -> Vec<f64> {
    let mut next: Vec<f64> = theta
        .iter()
        .zip(descent)
        .map(|(m, d)| m + eta * d)
        .collect();
    geometry.project(&mut next);
    next
}

/// Solves the saddle point (`q = 1`; other `q` by `geometry`) from `warm` until `stop`
/// (module docs).
pub(crate) fn solve(
    grams: &PackedGrams,
    b: &[f64],
    c: f64,
    geometry: Geometry,
    warm: Warm<'_>,
    stop: Stop,
) -> SaddleSolution {
    let Warm {
        alpha: warm_alpha,
        mu: warm_mu,
        eta,
    } = warm;
    let Stop {
        tol,
        abs_tol,
        max_steps,
    } = stop;
    let problem = Problem {
        grams,
        b,
        c,
        geometry,
    };
    let ng = grams.groups();
    let mut theta: Vec<f64> = if warm_mu.len() == ng && warm_mu.iter().sum::<f64>() > 0.0 {
        warm_mu.to_vec()
    } else {
        geometry.start(ng)
    };
    geometry.project(&mut theta);
    // The QP's absolute tolerance: a small fraction of the gap asked for, on the scale of
    // the value (C max b bounds it).
    let bmax = b.iter().cloned().fold(0.0, f64::max);
    let mut qp_tol = QP_SHARE * (tol * c * bmax).max(abs_tol).max(1e-300);
    let mut point = problem.evaluate(theta, warm_alpha, qp_tol);
    let mut qp_solves = 1;
    let mut steps = 0;
    let dmax = point
        .descent
        .iter()
        .cloned()
        .fold(0.0, f64::max)
        .max(1e-300);
    // A step carried from the last solve is kept if it is on a sane scale for this one.
    let mut eta = if eta.is_finite() && eta * dmax > 1e-8 && eta * dmax < 1e8 {
        eta
    } else {
        1.0 / dmax
    };
    let done = |p: &Point| p.gap() <= (tol * p.upper.abs()).max(abs_tol);
    loop {
        qp_tol = QP_SHARE * (tol * point.upper.abs()).max(abs_tol).max(1e-300);
        if done(&point) || steps >= max_steps {
            break;
        }
        // Armijo line search on phi along the projection arc (the step's directional
        // derivative is -descent . (theta' - theta) <= -||theta' - theta||^2 / eta).
        let mut accepted = None;
        for _ in 0..60 {
            let trial = projected_step(&geometry, &point.theta, &point.descent, eta);
            let decrease: f64 = point
                .descent
                .iter()
                .zip(trial.iter().zip(&point.theta))
                .map(|(d, (t, m))| d * (t - m))
                .sum();
            if decrease <= 0.0 {
                break;
            }
            // The QPs must resolve the decrease asked for: short steps tighten them (the
            // current point re-solved from its own multipliers, which is cheap).
            let floor = 1e-15 * point.upper.abs().max(1e-300);
            let need = (0.1 * decrease).clamp(floor, qp_tol);
            if point.qp_gap > need {
                let theta = point.theta.clone();
                point = problem.evaluate(theta, &point.alpha, need);
                qp_solves += 1;
            }
            let next = problem.evaluate(trial, &point.alpha, need);
            qp_solves += 1;
            if next.phi <= point.phi - 1e-4 * decrease {
                accepted = Some(next);
                break;
            }
            eta *= 0.25;
            if 0.1 * decrease < floor {
                break;
            }
        }
        let Some(next) = accepted else {
            break;
        };
        // Barzilai-Borwein: the next step from the change of theta and of the gradient.
        let (mut ss, mut sy) = (0.0, 0.0);
        for j in 0..ng {
            let dm = next.theta[j] - point.theta[j];
            ss += dm * dm;
            sy += dm * (point.descent[j] - next.descent[j]);
        }
        eta = if sy > 0.0 { ss / sy } else { eta * 4.0 };
        point = next;
        steps += 1;
    }
    SaddleSolution {
        converged: done(&point),
        upper: point.upper,
        lower: point.lower,
        alpha: point.alpha,
        mu: point.theta,
        quad_forms: point.h.iter().map(|v| 2.0 * v).collect(),
        steps,
        qp_solves,
        eta,
    }
}
