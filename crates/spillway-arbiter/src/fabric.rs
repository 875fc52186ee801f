//! The network as timeslot allocation sees it.
//!
//! Fastpass §3: each rearrangeably non-blocking tier is abstracted as one switch, so the
//! allocator only checks endpoint links and, in oversubscribed topologies (§3 footnote 2),
//! the aggregate uplink/downlink of each rack. A full-bisection network is one big switch.

/// Endpoints grouped into racks, with per-rack uplink and downlink capacities in
/// endpoint-link units (packets per timeslot leaving / entering the rack).
#[derive(Clone, Debug)]
pub struct Fabric {
    rack_of: Vec<u32>,
    up_cap: Vec<u32>,
    down_cap: Vec<u32>,
    constrained: bool,
}

impl Fabric {
    /// A full-bisection network of `n` endpoints: one big switch, no rack constraints.
    pub fn full_bisection(n: usize) -> Self {
        Self::with_racks(vec![0; n], vec![n as u32], vec![n as u32])
    }

    /// `racks` racks of `per_rack` endpoints each; every rack may send `up` and receive
    /// `down` inter-rack packets per timeslot.
    pub fn racks(racks: usize, per_rack: usize, up: u32, down: u32) -> Self {
        let rack_of = (0..racks * per_rack)
            .map(|e| (e / per_rack) as u32)
            .collect();
        Self::with_racks(rack_of, vec![up; racks], vec![down; racks])
    }

    /// Arbitrary rack membership and capacities. Panics if a rack index has no capacity
    /// entry (a configuration error, caught at construction, never mid-allocation).
    pub fn with_racks(rack_of: Vec<u32>, up_cap: Vec<u32>, down_cap: Vec<u32>) -> Self {
        assert_eq!(
            up_cap.len(),
            down_cap.len(),
            "one uplink and one downlink per rack"
        );
        assert!(
            rack_of.len() < u32::MAX as usize,
            "endpoint ids must fit in u32"
        );
        let mut size = vec![0u32; up_cap.len()];
        for &r in &rack_of {
            assert!((r as usize) < up_cap.len(), "rack {r} has no capacity");
            size[r as usize] += 1;
        }
        // A rack whose uplink and downlink carry all of its endpoints constrains nothing.
        let constrained = (0..up_cap.len()).any(|r| up_cap[r] < size[r] || down_cap[r] < size[r]);
        Fabric {
            rack_of,
            up_cap,
            down_cap,
            constrained,
        }
    }

    pub fn endpoints(&self) -> usize {
        self.rack_of.len()
    }
    pub fn racks_len(&self) -> usize {
        self.up_cap.len()
    }
    #[inline]
    pub fn rack_of(&self, e: u32) -> u32 {
        self.rack_of[e as usize]
    }
    pub fn up_cap(&self, rack: u32) -> u32 {
        self.up_cap[rack as usize]
    }
    pub fn down_cap(&self, rack: u32) -> u32 {
        self.down_cap[rack as usize]
    }
    /// Whether any rack limit can bind (otherwise the allocator skips the rack checks).
    pub fn constrained(&self) -> bool {
        self.constrained
    }
}
