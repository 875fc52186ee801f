//! The network as timeslot allocation sees it.
//!
//! Fastpass §3: each rearrangeably non-blocking tier is abstracted as one switch, so the
//! allocator only checks endpoint links and, in oversubscribed topologies (§3 footnote 2),
//! the aggregate uplink/downlink of each rack. A full-bisection network is one big switch.

/// A configuration the arbiter cannot run with: refused when the fabric, allocator or
/// pipeline is built (configuration comes from outside: never a panic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// A batch width outside `1..=MAX_WIDTH` ([`crate::MAX_WIDTH`]).
    Width(u32),
    /// A pipeline of fewer than two stages.
    Stages(usize),
    /// Pipeline messages of no pairs.
    Chunk,
    /// Uplink and downlink capacity lists of different lengths (one of each per rack).
    CapacityLengths { up: usize, down: usize },
    /// An endpoint in a rack that has no capacity entry.
    UnknownRack {
        endpoint: u32,
        rack: u32,
        racks: usize,
    },
    /// More endpoints than u32 ids can name.
    TooManyEndpoints(usize),
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            ConfigError::Width(w) => write!(
                f,
                "batch width {w} is not in 1..={}",
                crate::slots::MAX_WIDTH
            ),
            ConfigError::Stages(s) => {
                write!(f, "a pipeline needs at least 2 stages, not {s}")
            }
            ConfigError::Chunk => write!(f, "pipeline messages must hold at least one pair"),
            ConfigError::CapacityLengths { up, down } => write!(
                f,
                "{up} uplink capacities but {down} downlink capacities (one of each per rack)"
            ),
            ConfigError::UnknownRack {
                endpoint,
                rack,
                racks,
            } => write!(
                f,
                "endpoint {endpoint} is in rack {rack}, but only {racks} racks have capacities"
            ),
            ConfigError::TooManyEndpoints(n) => {
                write!(f, "{n} endpoints: ids are u32, at most {}", u32::MAX - 1)
            }
        }
    }
}
impl std::error::Error for ConfigError {}

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
    ///
    /// # Panics
    /// If `n` is `u32::MAX` or more (endpoint ids are u32).
    pub fn full_bisection(n: usize) -> Self {
        let cap = u32::try_from(n).unwrap_or(u32::MAX);
        Self::with_racks(vec![0; n], vec![cap], vec![cap]).expect("endpoint ids fit in u32")
    }

    /// `racks` racks of `per_rack` endpoints each; every rack may send `up` and receive
    /// `down` inter-rack packets per timeslot.
    ///
    /// # Panics
    /// If there are `u32::MAX` endpoints or more (endpoint ids are u32).
    pub fn racks(racks: usize, per_rack: usize, up: u32, down: u32) -> Self {
        let n = racks
            .checked_mul(per_rack)
            .expect("endpoint ids fit in u32");
        let rack_of = (0..n).map(|e| (e / per_rack) as u32).collect();
        Self::with_racks(rack_of, vec![up; racks], vec![down; racks])
            .expect("endpoint ids fit in u32")
    }

    /// Arbitrary rack membership and capacities: `rack_of[e]` is endpoint e's rack,
    /// `up_cap[r]` and `down_cap[r]` rack r's capacities. A rack index without a
    /// capacity entry, or lists of different lengths, are errors (caught at
    /// construction, never mid-allocation).
    pub fn with_racks(
        rack_of: Vec<u32>,
        up_cap: Vec<u32>,
        down_cap: Vec<u32>,
    ) -> Result<Self, ConfigError> {
        if up_cap.len() != down_cap.len() {
            return Err(ConfigError::CapacityLengths {
                up: up_cap.len(),
                down: down_cap.len(),
            });
        }
        if rack_of.len() >= u32::MAX as usize {
            return Err(ConfigError::TooManyEndpoints(rack_of.len()));
        }
        let mut size = vec![0u32; up_cap.len()];
        for (e, &r) in rack_of.iter().enumerate() {
            let Some(s) = size.get_mut(r as usize) else {
                return Err(ConfigError::UnknownRack {
                    endpoint: e as u32,
                    rack: r,
                    racks: up_cap.len(),
                });
            };
            *s += 1;
        }
        // A rack whose uplink and downlink carry all of its endpoints constrains nothing.
        let constrained = (0..up_cap.len()).any(|r| up_cap[r] < size[r] || down_cap[r] < size[r]);
        Ok(Fabric {
            rack_of,
            up_cap,
            down_cap,
            constrained,
        })
    }

    pub fn endpoints(&self) -> usize {
        self.rack_of.len()
    }
    pub fn racks_len(&self) -> usize {
        self.up_cap.len()
    }
    /// Endpoint `e`'s rack; `None` for an endpoint outside the fabric.
    #[inline]
    pub fn rack_of(&self, e: u32) -> Option<u32> {
        self.rack_of.get(e as usize).copied()
    }
    /// Rack `rack`'s uplink capacity; `None` for a rack outside the fabric.
    pub fn up_cap(&self, rack: u32) -> Option<u32> {
        self.up_cap.get(rack as usize).copied()
    }
    /// Rack `rack`'s downlink capacity; `None` for a rack outside the fabric.
    pub fn down_cap(&self, rack: u32) -> Option<u32> {
        self.down_cap.get(rack as usize).copied()
    }
    /// Every endpoint's rack, by endpoint.
    pub(crate) fn racks_of(&self) -> &[u32] {
        &self.rack_of
    }
    /// Uplink and downlink capacities, by rack.
    pub(crate) fn caps(&self) -> (&[u32], &[u32]) {
        (&self.up_cap, &self.down_cap)
    }
    /// Whether any rack limit can bind (otherwise the allocator skips the rack checks).
    pub fn constrained(&self) -> bool {
        self.constrained
    }
}
