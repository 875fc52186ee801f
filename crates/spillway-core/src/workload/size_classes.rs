//! Priority classes by flow size (`workload.classes_by_size`): the application knows
//! how much it is about to send (a request, a response of known size) and marks the
//! flow's packets by it, short flows in a higher class than long ones, as DeTail §3
//! (deadline-sensitive flows marked above background ones) and pFabric's size-based
//! priorities assume the end hosts can. It is independent of any scheme: it sets only
//! the class a flow's data and ACKs carry, which every queue (NICs, switch ports,
//! ingress queues, pause decisions) then serves as it serves any class.

/// Ascending size thresholds t₀ < t₁ < … (at most [`SizeClasses::MAX_THRESHOLDS`]):
/// a flow of size ≤ t₀ is class 0 (the highest), ≤ t₁ class 1, …, larger than all of
/// them class `len`. None: flows keep the classes they had.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SizeClasses {
    thresholds: Vec<u64>,
}

impl SizeClasses {
    /// Eight strict-priority classes: seven thresholds.
    pub const MAX_THRESHOLDS: usize = 7;

    /// `thresholds` must ascend strictly, be positive and at most seven (the scenario
    /// reader refuses anything else, naming the key).
    pub fn new(thresholds: Vec<u64>) -> SizeClasses {
        assert!(thresholds.len() <= Self::MAX_THRESHOLDS);
        assert!(thresholds.first().is_none_or(|&t| t > 0));
        assert!(thresholds.windows(2).all(|w| w[0] < w[1]));
        SizeClasses { thresholds }
    }

    pub fn is_off(&self) -> bool {
        self.thresholds.is_empty()
    }

    pub fn thresholds(&self) -> &[u64] {
        &self.thresholds
    }

    /// The class of a flow of `size` bytes: the number of thresholds below it.
    #[inline]
    pub fn class_of(&self, size: u64) -> u8 {
        self.thresholds.partition_point(|&t| t < size) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_takes_the_first_class_whose_threshold_it_does_not_exceed() {
        let c = SizeClasses::new(vec![100, 10_000]);
        assert_eq!(c.class_of(1), 0);
        assert_eq!(c.class_of(100), 0, "at the threshold: still the class");
        assert_eq!(c.class_of(101), 1);
        assert_eq!(c.class_of(10_000), 1);
        assert_eq!(c.class_of(10_001), 2);
        assert_eq!(c.class_of(u64::MAX), 2);
        let all = SizeClasses::new((1..=7).map(|k| k * 1000).collect());
        assert_eq!(all.class_of(7001), 7, "eight classes: 7 is the lowest");
        assert!(SizeClasses::default().is_off());
    }
}
