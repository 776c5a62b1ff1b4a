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

use super::super::qp;
use super::grams::PackedGrams;
use super::project_onto_sum;

/// The pairwise QP stops when its own gap is this share of the saddle point's tolerance.
const QP_SHARE: f64 = 0.05;

/// Where [`solve`] starts: the last solve's multipliers (padded with zeros for new cuts),
/// template weights and step (any may be empty or 0: zeros, uniform weights, a step on the
/// problem's scale).
#[derive(Debug, Clone, Copy)]
pub struct Warm<'a> {
    pub alpha: &'a [f64],
    pub mu: &'a [f64],
    pub eta: f64,
}

/// When [`solve`] stops: the gap at most `tol` times `J(mu)` or at most `abs_tol`, or after
/// `max_steps` line searches.
#[derive(Debug, Clone, Copy)]
pub struct Stop {
    pub tol: f64,
    pub abs_tol: f64,
    pub max_steps: usize,
}

/// The result of [`solve`].
#[derive(Debug, Clone, PartialEq)]
pub struct SaddleSolution {
    /// The multipliers, optimal for the l2 dual at `mu` (to the QP's tolerance).
    pub alpha: Vec<f64>,
    /// The template weights (a point of the simplex).
    pub mu: Vec<f64>,
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

/// What one point `mu` gives: the QP's `alpha`, `h`, `J(mu)` and `D(alpha)`.
struct Point {
    mu: Vec<f64>,
    alpha: Vec<f64>,
    h: Vec<f64>,
    upper: f64,
    lower: f64,
    /// The QP's own gap (how far `upper` may be above `J(mu)`).
    qp_gap: f64,
}

impl Point {
    fn gap(&self) -> f64 {
        (self.upper - self.lower).max(0.0)
    }
}

fn evaluate(
    grams: &PackedGrams,
    b: &[f64],
    c: f64,
    mu: Vec<f64>,
    warm: &[f64],
    qp_tol: f64,
) -> Point {
    let k = grams.combine(&mu);
    let sol = qp::solve(&k, b, c, warm, qp_tol, 10_000_000);
    let h: Vec<f64> = grams
        .quad_forms(&sol.alpha)
        .into_iter()
        .map(|v| 0.5 * v)
        .collect();
    let lin: f64 = b.iter().zip(&sol.alpha).map(|(x, y)| x * y).sum();
    let hmax = h.iter().cloned().fold(0.0, f64::max);
    let mixed: f64 = h.iter().zip(&mu).map(|(x, m)| x * m).sum();
    Point {
        upper: lin - mixed + sol.gap.max(0.0),
        lower: lin - hmax,
        qp_gap: sol.gap.max(0.0),
        mu,
        alpha: sol.alpha,
        h,
    }
}

/// The projected gradient step of size `eta` from `mu` along `-grad J = h` (module docs).
fn projected_step(mu: &[f64], h: &[f64], eta: f64) -> Vec<f64> {
    let mut next: Vec<f64> = mu.iter().zip(h).map(|(m, hj)| m + eta * hj).collect();
    project_onto_sum(&mut next, 1.0);
    next
}

/// Solves the saddle point from `warm` until `stop` (module docs).
pub fn solve(grams: &PackedGrams, b: &[f64], c: f64, warm: Warm<'_>, stop: Stop) -> SaddleSolution {
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
    let ng = grams.groups();
    let mut mu: Vec<f64> = if warm_mu.len() == ng && warm_mu.iter().sum::<f64>() > 0.0 {
        warm_mu.iter().map(|m| m.max(0.0)).collect()
    } else {
        vec![1.0; ng]
    };
    let total: f64 = mu.iter().sum();
    mu.iter_mut().for_each(|m| *m /= total);
    // The QP's absolute tolerance: a small fraction of the gap asked for, on the scale of
    // the value (C max b bounds it).
    let bmax = b.iter().cloned().fold(0.0, f64::max);
    let mut qp_tol = QP_SHARE * (tol * c * bmax).max(abs_tol).max(1e-300);
    let mut point = evaluate(grams, b, c, mu, warm_alpha, qp_tol);
    let mut qp_solves = 1;
    let mut steps = 0;
    let hmax = point.h.iter().cloned().fold(0.0, f64::max).max(1e-300);
    // A step carried from the last solve is kept if it is on a sane scale for this one.
    let mut eta = if eta.is_finite() && eta * hmax > 1e-8 && eta * hmax < 1e8 {
        eta
    } else {
        1.0 / hmax
    };
    loop {
        qp_tol = QP_SHARE * (tol * point.upper).max(abs_tol).max(1e-300);
        if point.gap() <= (tol * point.upper.abs()).max(abs_tol) || steps >= max_steps {
            break;
        }
        // Armijo line search on J along the projection arc (the step's directional
        // derivative is -h . (mu' - mu) <= -||mu' - mu||^2 / eta).
        let mut accepted = None;
        for _ in 0..60 {
            let trial = projected_step(&point.mu, &point.h, eta);
            let decrease: f64 = point
                .h
                .iter()
                .zip(trial.iter().zip(&point.mu))
                .map(|(hj, (t, m))| hj * (t - m))
                .sum();
            if decrease <= 0.0 {
                break;
            }
            // The QPs must resolve the decrease asked for: short steps tighten them (the
            // current point re-solved from its own multipliers, which is cheap).
            let floor = 1e-15 * point.upper.abs().max(1e-300);
            let need = (0.1 * decrease).clamp(floor, qp_tol);
            if point.qp_gap > need {
                let mu = point.mu.clone();
                point = evaluate(grams, b, c, mu, &point.alpha, need);
                qp_solves += 1;
            }
            let next = evaluate(grams, b, c, trial, &point.alpha, need);
            qp_solves += 1;
            if next.upper <= point.upper - 1e-4 * decrease {
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
        // Barzilai-Borwein: the next step from the change of mu and of the gradient -h.
        let (mut ss, mut sy) = (0.0, 0.0);
        for j in 0..ng {
            let dm = next.mu[j] - point.mu[j];
            ss += dm * dm;
            sy += dm * (point.h[j] - next.h[j]);
        }
        eta = if sy > 0.0 { ss / sy } else { eta * 4.0 };
        point = next;
        steps += 1;
    }
    SaddleSolution {
        converged: point.gap() <= (tol * point.upper.abs()).max(abs_tol),
        upper: point.upper,
        lower: point.lower,
        alpha: point.alpha,
        mu: point.mu,
        steps,
        qp_solves,
        eta,
    }
}
