//! The messages of the online learner over parts (`estimator::parts::online`): a plan, the
//! loop's state, a part's pass.

use crate::estimator::parts::online::{
    run_passes, state_bytes, state_from_bytes, OnlinePlan, PartPass,
};
use crate::estimator::spec::{LearnerKind, Task};
use crate::estimator::Settings;

/// What reads writes back to bytes that read to the same value; a plan read takes the
/// parts' `L(0)` (or refuses it); a pass read, twice, is mixed by the loop or refused (a
/// pass that did not start from the loop's state), never a panic.
pub fn online_parts(data: &[u8]) {
    if let Ok(plan) = OnlinePlan::from_bytes(data) {
        let bytes = plan.to_bytes().expect("a plan serializes");
        assert_eq!(
            OnlinePlan::from_bytes(&bytes).expect("its own bytes read"),
            plan
        );
        let _ = plan.clone().with_loss_at_zero(&[1.0, 2.5]);
        let _ = plan.with_loss_at_zero(&[]);
    }
    // The seeds' tagger has 27 weights.
    for dim in [DIM, 0, 1] {
        if let Ok(state) = state_from_bytes(data, dim) {
            let bytes = state_bytes(&state).expect("a state serializes");
            assert_eq!(
                state_from_bytes(&bytes, dim).expect("its own bytes read"),
                state
            );
        }
        if let Ok(pass) = PartPass::from_bytes(data, dim) {
            let bytes = pass.to_bytes().expect("a pass serializes");
            assert_eq!(
                PartPass::from_bytes(&bytes, dim).expect("its own bytes read"),
                pass
            );
            let spec = Settings::new()
                .with("epochs", "2")
                .structured_spec(Task::Sequence, LearnerKind::Online, 1.0, 0)
                .expect("an online spec");
            let plan = OnlinePlan::new(&spec, 3)
                .and_then(|p| p.with_loss_at_zero(&[3.0]))
                .expect("a plan");
            let mut twice =
                |_: Option<&[u8]>, _: usize| Ok(Some(vec![data.to_vec(), data.to_vec()]));
            let _ = run_passes(&plan, dim, &mut twice, &());
        }
    }
}

/// The number of weights of the tagger the corpus's states and passes were written by.
const DIM: usize = 27;
