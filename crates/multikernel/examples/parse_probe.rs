use multikernel::task::parse::*;
use std::io::Read;
use std::time::Instant;

fn read(path: &str) -> Vec<ParseSentence> {
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    let mut out = Vec::new();
    let mut cur = ParseSentence {
        heads: Some(vec![]),
        deprels: Some(vec![]),
        ..Default::default()
    };
    for line in s.lines().chain(std::iter::once("")) {
        if line.trim().is_empty() {
            if !cur.tokens.is_empty() {
                out.push(std::mem::replace(
                    &mut cur,
                    ParseSentence {
                        heads: Some(vec![]),
                        deprels: Some(vec![]),
                        ..Default::default()
                    },
                ));
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let c: Vec<&str> = line.split('\t').collect();
        if c[0].contains('-') || c[0].contains('.') {
            continue;
        }
        cur.tokens.push(ParseToken {
            form: c[1].into(),
            lemma: c[2].into(),
            upos: c[3].into(),
            xpos: c[4].into(),
            feats: c[5].into(),
            space_after: !c[9].contains("SpaceAfter=No"),
        });
        cur.heads.as_mut().unwrap().push(c[6].parse().unwrap());
        cur.deprels.as_mut().unwrap().push(c[7].into());
    }
    out
}

fn main() {
    use multikernel::prox::RegSpec;
    use multikernel::solver::online::engine::OnlineLearner;
    use multikernel::solver::online::params::{OnlineParams, StepSchedule};
    use multikernel::task::structured::{evaluate_explicit, StructLoss, StructuredOnline};
    use multikernel::task::tree::ChuLiuEdmonds;
    let args: Vec<String> = std::env::args().collect();
    let all = read(&args[1]);
    let support = if args.get(2).map(String::as_str) == Some("all") {
        Support::All
    } else {
        Support::Gold
    };
    let lambda: f64 = args.get(3).map_or(1e-4, |s| s.parse().unwrap());
    let eta0: f64 = args.get(4).map_or(1.0, |s| s.parse().unwrap());
    let reg: RegSpec = args.get(5).map_or(RegSpec::L2, |s| s.parse().unwrap());
    let epochs: usize = args.get(6).map_or(10, |s| s.parse().unwrap());
    let sched: StepSchedule = args
        .get(7)
        .map_or(StepSchedule::InvSqrt, |s| s.parse().unwrap());
    let train: Vec<_> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 10 < 8)
        .map(|(_, s)| s.clone())
        .collect();
    let dev: Vec<_> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 10 == 8)
        .map(|(_, s)| s.clone())
        .collect();
    let test: Vec<_> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 10 == 9)
        .map(|(_, s)| s.clone())
        .collect();
    let t = Instant::now();
    let f = ArcFeaturizer::fit(TemplateSet::default_set(), support, &train).unwrap();
    let tr = tree_task(&f, &train, ChuLiuEdmonds::default()).unwrap();
    let dv = tree_task(&f, &dev, ChuLiuEdmonds::default()).unwrap();
    let te = tree_task(&f, &test, ChuLiuEdmonds::default()).unwrap();
    println!(
        "index {:.2}s features {}",
        t.elapsed().as_secs_f64(),
        f.layout().total()
    );
    let adapter = StructuredOnline::new(&tr, StructLoss::Hinge).unwrap();
    let params = OnlineParams {
        lambda,
        reg,
        eta0,
        schedule: sched,
        epochs: 1,
        seed: 0,
        averaging: std::env::var("AVG").map_or(true, |v| v == "1"),
        projection: std::env::var("PROJ").is_ok_and(|v| v == "1"),
        shuffle: true,
    };
    let mut learner = OnlineLearner::new(&adapter, &[], params).unwrap();
    for e in 0..epochs {
        let t = Instant::now();
        learner.epoch();
        let secs = t.elapsed().as_secs_f64();
        let st = learner.state();
        let w: Vec<f64> = st.explicit_values(true).concat();
        let d = evaluate_explicit(&dv, &w).unwrap();
        let te_c = evaluate_explicit(&te, &w).unwrap();
        let norms = st.regularized_norms();
        let kept = norms.iter().filter(|&&x| x > 0.0).count();
        println!(
            "epoch {} {:.3}s dev {:.2} test {:.2} kept {}/{}",
            e + 1,
            secs,
            100.0 * d.value(),
            100.0 * te_c.value(),
            kept,
            norms.len()
        );
    }
}
