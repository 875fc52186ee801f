//! Path selection by edge coloring (Fastpass §4).
//!
//! A timeslot's matching becomes a bipartite multigraph of source rack → destination
//! rack; a proper edge coloring with one color per core switch (path) puts at most one
//! packet on every rack–core link. The multigraph is padded with dummy edges to a
//! D-regular graph (D = its largest degree, as the original does), then split:
//! an Euler split halves an even-degree regular graph (§4: walk cycles, alternate edges);
//! odd degree peels off one perfect matching first (Kuhn's augmenting paths; a regular
//! bipartite multigraph always has one). Power-of-two degree needs only Euler splits;
//! any degree is handled, and exactly D colors are used.
//!
//! The graph is held as a count matrix plus, during a split, one bitmask row per vertex
//! for the odd-multiplicity edges: the walks are find-first-set on words (§4: "size-
//! optimized bitmap-based data structure"). Racks per side are limited to 64 (one word).

use crate::demand::Flow;

/// Largest number of vertices on either side of the colored graph.
pub const MAX_VERTICES: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathError {
    /// A vertex has more edges than there are colors (paths): the allocator let more
    /// packets in or out of a rack than its links carry.
    DegreeExceedsColors { degree: u32, colors: u32 },
    /// More than [`MAX_VERTICES`] vertices on a side, or an edge naming one outside.
    BadVertex(u32),
    /// A packet names an endpoint outside the fabric of `endpoints` endpoints.
    UnknownEndpoint { endpoint: u32, endpoints: usize },
    /// Three tiers with pods of no racks.
    ZeroRacksPerPod,
}

/// The error for a flow with an endpoint outside a fabric of `n` (at least one is).
fn unknown_endpoint(f: Flow, n: usize) -> PathError {
    let endpoint = if f.src as usize >= n { f.src } else { f.dst };
    PathError::UnknownEndpoint {
        endpoint,
        endpoints: n,
    }
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathError::DegreeExceedsColors { degree, colors } => {
                write!(
                    f,
                    "a rack has {degree} inter-rack packets but only {colors} paths"
                )
            }
            PathError::BadVertex(v) => {
                write!(f, "vertex {v} out of range (at most {MAX_VERTICES})")
            }
            PathError::UnknownEndpoint {
                endpoint,
                endpoints,
            } => write!(
                f,
                "endpoint {endpoint} is not in the fabric of {endpoints} endpoints"
            ),
            PathError::ZeroRacksPerPod => write!(f, "a pod must hold at least one rack"),
        }
    }
}
impl std::error::Error for PathError {}

/// Edge colorer with reusable buffers: no allocation once warmed up.
#[derive(Default)]
pub struct EdgeColoring {
    n: usize,
    /// Count matrices (n x n), reused across calls.
    pool: Vec<Vec<u16>>,
    /// Work stack: (matrix, its regular degree).
    stack: Vec<(Vec<u16>, u32)>,
    /// Perfect matchings found, `n` entries each: right vertex of each left vertex.
    perms: Vec<u8>,
    /// Per (left, right): colors still to hand out, as a linked list through `next`.
    head: Vec<u16>,
    next: Vec<u16>,
    match_r: Vec<u8>,
}

const NONE: u16 = u16::MAX;

/// Most colors [`EdgeColoring`] hands out: edge multiplicities and colors are kept as
/// u16, colors below `u16::MAX` (the end-of-list mark).
pub const EULER_MAX_COLORS: u32 = NONE as u32;

impl EdgeColoring {
    pub fn new() -> Self {
        Self::default()
    }

    /// Color `edges` (left, right) of a bipartite multigraph with `n` vertices per side
    /// using at most `colors` colors (and at most [`EULER_MAX_COLORS`]); `out[i]` is the
    /// color of `edges[i]`. Returns the number of colors used (the largest degree).
    pub fn color(
        &mut self,
        n: usize,
        edges: &[(u32, u32)],
        colors: u32,
        out: &mut Vec<u32>,
    ) -> Result<u32, PathError> {
        if n > MAX_VERTICES {
            return Err(PathError::BadVertex(n as u32));
        }
        self.n = n;
        out.clear();
        // Degrees first: the count matrix holds u16 multiplicities, so a degree beyond
        // them is refused before anything is counted there.
        let (mut dl, mut dr) = ([0u32; MAX_VERTICES], [0u32; MAX_VERTICES]);
        for &(l, r) in edges {
            if l as usize >= n || r as usize >= n {
                return Err(PathError::BadVertex(l.max(r)));
            }
            dl[l as usize] += 1;
            dr[r as usize] += 1;
        }
        let deg = dl.iter().chain(&dr).copied().max().unwrap_or(0);
        if deg > colors || deg > EULER_MAX_COLORS {
            return Err(PathError::DegreeExceedsColors {
                degree: deg,
                colors: colors.min(EULER_MAX_COLORS),
            });
        }
        let mut m = self.take_matrix();
        for &(l, r) in edges {
            m[l as usize * n + r as usize] += 1;
        }
        // Pad to a deg-regular multigraph with dummy edges (§7.3 footnote 4).
        let (mut i, mut j) = (0, 0);
        while i < n && j < n {
            let (a, b) = (deg - dl[i], deg - dr[j]);
            let x = a.min(b);
            m[i * n + j] += x as u16;
            dl[i] += x;
            dr[j] += x;
            if dl[i] == deg {
                i += 1;
            }
            if dr[j] == deg {
                j += 1;
            }
        }
        self.perms.clear();
        self.stack.push((m, deg));
        while let Some((m, d)) = self.stack.pop() {
            self.decompose(m, d);
        }
        // Hand each real edge a color whose matching contains it; dummies get the rest.
        self.head.clear();
        self.head.resize(n * n, NONE);
        self.next.clear();
        self.next.resize(deg as usize * n, NONE);
        for c in 0..deg as usize {
            for l in 0..n {
                let r = self.perms[c * n + l] as usize;
                self.next[c * n + l] = self.head[l * n + r];
                self.head[l * n + r] = c as u16;
            }
        }
        for &(l, r) in edges {
            let h = &mut self.head[l as usize * n + r as usize];
            let c = *h as usize;
            debug_assert!(c != NONE as usize);
            *h = self.next[c * n + l as usize];
            out.push(c as u32);
        }
        Ok(deg)
    }

    fn take_matrix(&mut self) -> Vec<u16> {
        let mut m = self.pool.pop().unwrap_or_default();
        m.clear();
        m.resize(self.n * self.n, 0);
        m
    }

    /// Split a d-regular count matrix into perfect matchings, appended to `perms`.
    fn decompose(&mut self, mut m: Vec<u16>, d: u32) {
        let n = self.n;
        if d == 0 {
            self.pool.push(m);
            return;
        }
        if d % 2 == 1 {
            self.peel_matching(&mut m);
            if d == 1 {
                self.pool.push(m);
                return;
            }
            return self.decompose(m, d - 1);
        }
        // Euler split: halve every multiplicity; the odd remainders form a graph where
        // every vertex has even degree, whose cycles alternate between the halves.
        let mut b = self.take_matrix();
        let (mut odd_l, mut odd_r) = ([0u64; MAX_VERTICES], [0u64; MAX_VERTICES]);
        for l in 0..n {
            let row = &mut m[l * n..(l + 1) * n];
            let brow = &mut b[l * n..(l + 1) * n];
            let mut bits = 0u64;
            for r in 0..n {
                let x = row[r];
                row[r] = x >> 1;
                brow[r] = x >> 1;
                bits |= ((x & 1) as u64) << r;
            }
            odd_l[l] = bits;
            let mut bb = bits;
            while bb != 0 {
                let r = bb.trailing_zeros() as usize;
                bb &= bb - 1;
                odd_r[r] |= 1 << l;
            }
        }
        for start in 0..n {
            while odd_l[start] != 0 {
                let mut l = start;
                // Leaving a left vertex: edge to m; leaving a right vertex: edge to b.
                while odd_l[l] != 0 {
                    let r = odd_l[l].trailing_zeros() as usize;
                    odd_l[l] &= !(1 << r);
                    odd_r[r] &= !(1 << l);
                    m[l * n + r] += 1;
                    let l2 = odd_r[r].trailing_zeros() as usize;
                    odd_r[r] &= !(1 << l2);
                    odd_l[l2] &= !(1 << r);
                    b[l2 * n + r] += 1;
                    l = l2;
                }
            }
        }
        self.stack.push((b, d / 2));
        self.stack.push((m, d / 2));
    }

    /// Remove one perfect matching from a regular count matrix (Kuhn's algorithm on
    /// bitmask rows; exists by König's theorem).
    fn peel_matching(&mut self, m: &mut [u16]) {
        let n = self.n;
        let mut adj = [0u64; MAX_VERTICES];
        for l in 0..n {
            for r in 0..n {
                adj[l] |= ((m[l * n + r] > 0) as u64) << r;
            }
        }
        self.match_r.clear();
        self.match_r.resize(n, u8::MAX);
        for l in 0..n {
            // Cheap first try: a free neighbour.
            let mut free = 0u64;
            for r in 0..n {
                free |= ((self.match_r[r] == u8::MAX) as u64) << r;
            }
            let f = adj[l] & free;
            if f != 0 {
                self.match_r[f.trailing_zeros() as usize] = l as u8;
                continue;
            }
            let mut visited = 0u64;
            let ok = augment(l, &adj, &mut self.match_r, &mut visited);
            assert!(
                ok,
                "regular bipartite multigraph without a perfect matching"
            );
        }
        let base = self.perms.len();
        self.perms.resize(base + n, 0);
        for r in 0..n {
            let l = self.match_r[r] as usize;
            self.perms[base + l] = r as u8;
            m[l * n + r] -= 1;
        }
    }
}

fn augment(l: usize, adj: &[u64; MAX_VERTICES], match_r: &mut [u8], visited: &mut u64) -> bool {
    let mut c = adj[l] & !*visited;
    while c != 0 {
        let r = c.trailing_zeros() as usize;
        c &= c - 1;
        *visited |= 1 << r;
        let o = match_r[r];
        if o == u8::MAX || augment(o as usize, adj, match_r, visited) {
            match_r[r] = l as u8;
            return true;
        }
    }
    false
}

/// Edge coloring by alternating paths (König's proof, as in Gabow's simple algorithm):
/// color edges one by one; if no color is free at both ends, take a free at the source
/// and b free at the destination, swap a and b along the a/b path from the destination
/// (it cannot reach the source in a bipartite graph), then use a. Any degree, exactly
/// D colors, no padding. Free colors per vertex are u64 bitmasks (find-first-set), so
/// the common case is one AND; at most 64 colors.
pub struct AlternatingPaths {
    /// Free colors per vertex (left 0..64, right 64..128).
    free: [u64; 2 * MAX_VERTICES],
    /// Edge index holding color c at vertex v: `at[c * 128 + v]`. Valid only where bit c
    /// of `free[v]` is clear, so it never needs clearing between calls.
    /// Inline, next to `free`: one base register addresses both.
    at: [u16; 2 * MAX_VERTICES * 64],
}

impl Default for AlternatingPaths {
    fn default() -> Self {
        AlternatingPaths {
            free: [0; 2 * MAX_VERTICES],
            at: [0; 2 * MAX_VERTICES * 64],
        }
    }
}

impl AlternatingPaths {
    pub fn new() -> Self {
        Self::default()
    }

    /// Same contract as [`EdgeColoring::color`], with at most 64 colors (a larger degree
    /// is [`PathError::DegreeExceedsColors`] with `colors` 64).
    pub fn color(
        &mut self,
        n: usize,
        edges: &[(u32, u32)],
        colors: u32,
        out: &mut Vec<u32>,
    ) -> Result<u32, PathError> {
        if n > MAX_VERTICES {
            return Err(PathError::BadVertex(n as u32));
        }
        // No length check needed: with at most 64 vertices of degree at most 64 below,
        // there are fewer than `NONE` edges.
        let mut deg = [0u32; 2 * MAX_VERTICES];
        for &(l, r) in edges {
            if l as usize >= n || r as usize >= n {
                return Err(PathError::BadVertex(l.max(r)));
            }
            deg[l as usize] += 1;
            deg[n + r as usize] += 1;
        }
        let d = deg.iter().copied().max().unwrap_or(0);
        if d > colors || d > 64 {
            return Err(PathError::DegreeExceedsColors {
                degree: d,
                colors: colors.min(64),
            });
        }
        out.clear();
        out.resize(edges.len(), 0);
        let ends = |e: usize| {
            let (l, r) = edges[e];
            Ok(Some((l, r)))
        };
        self.color_items(edges.len(), d, ends, |i, c| out[i] = c)?;
        Ok(d)
    }

    /// The coloring loop. Items `0..len`: `ends(i)` gives item i's vertices (left and
    /// right, both below 64), `None` for an item to leave uncolored, or an error; colors
    /// are `0..colors` (`colors <= 64`). `colored(i, c)` is called whenever an item's
    /// color is set or changed. Fails, on a cold path, if a vertex has more than
    /// `colors` items (or `ends` fails).
    #[inline(always)]
    fn color_items<E>(
        &mut self,
        len: usize,
        colors: u32,
        ends: E,
        mut colored: impl FnMut(usize, u32),
    ) -> Result<(), PathError>
    where
        E: Fn(usize) -> Result<Option<(u32, u32)>, PathError>,
    {
        debug_assert!(colors <= 64 && len < NONE as usize);
        let all = if colors == 0 {
            0
        } else {
            u64::MAX >> (64 - colors.min(64))
        };
        self.free = [all; 2 * MAX_VERTICES];
        let (free, at) = (&mut self.free, &mut self.at);
        // Only colored items are on alternating paths, and those have vertices.
        let on_path = |e: usize| match ends(e) {
            Ok(Some((l, r))) => (l as usize & 63, 64 | (r as usize & 63)),
            _ => unreachable!("an item on an alternating path has been colored"),
        };
        // The source's free mask stays in a register while consecutive items share the
        // source (a matching listed by endpoint): otherwise every color choice would wait
        // on the previous one's store to the same word.
        let mut cur = 0usize;
        let mut fu = free[0];
        for i in 0..len {
            let Some((l, r)) = ends(i)? else {
                continue;
            };
            // Vertices below 64 (callers check); the masks make indexing provably in
            // bounds.
            let (u, w) = (l as usize & 63, 64 | (r as usize & 63));
            if u != cur {
                free[cur] = fu;
                cur = u;
                fu = free[u];
            }
            let mut fw = free[w];
            let mut common = fu & fw;
            if common == 0 {
                if fu == 0 || fw == 0 {
                    return Err(out_of_colors(len, colors, &ends));
                }
                let (a, b) = (fu.trailing_zeros(), fw.trailing_zeros());
                flip(free, at, &on_path, &mut colored, w, a, b);
                // The path never reaches u (bipartite): only w's mask changed.
                fw = free[w];
                common = 1 << a;
            }
            let c = common.trailing_zeros() as usize;
            fu &= !(1 << c);
            free[w] = fw & !(1 << c);
            at[c * 128 + u] = i as u16;
            at[c * 128 + w] = i as u16;
            colored(i, c as u32);
        }
        free[cur] = fu;
        Ok(())
    }
}

/// Out of colors: the largest degree, or an error of `ends` further on (as when items are
/// checked before coloring).
#[cold]
#[inline(never)]
fn out_of_colors(
    len: usize,
    colors: u32,
    ends: &impl Fn(usize) -> Result<Option<(u32, u32)>, PathError>,
) -> PathError {
    let mut deg = [0u32; 2 * MAX_VERTICES];
    for e in 0..len {
        match ends(e) {
            Ok(Some((l, r))) => {
                deg[l as usize & 63] += 1;
                deg[64 + (r as usize & 63)] += 1;
            }
            Ok(None) => {}
            Err(err) => return err,
        }
    }
    PathError::DegreeExceedsColors {
        degree: deg.into_iter().max().unwrap_or(0),
        colors,
    }
}

/// Swap colors a and b on the a/b alternating path from the right vertex `w` (a used
/// there, b free), in one pass: each step reads the next edge before taking its slot.
#[cold]
#[inline(never)]
fn flip(
    free: &mut [u64; 2 * MAX_VERTICES],
    at: &mut [u16; 2 * MAX_VERTICES * 64],
    ends: &impl Fn(usize) -> (usize, usize),
    colored: &mut impl FnMut(usize, u32),
    w: usize,
    a: u32,
    b: u32,
) {
    let (ab, bits) = ((a ^ b) as usize, (1u64 << a) | (1u64 << b));
    free[w] ^= bits;
    let (mut v, mut c) = (w, a as usize);
    let mut e = at[c * 128 + v] as usize;
    loop {
        // Edge e between v and x goes from color c to c2.
        let (l, r) = ends(e);
        let x = if l == v { r } else { l };
        let c2 = c ^ ab;
        at[c2 * 128 + v] = e as u16;
        colored(e, c2 as u32);
        if free[x] >> c2 & 1 == 1 {
            // x has no c2 edge: the path ends; at x, c is now free and c2 used.
            at[c2 * 128 + x] = e as u16;
            free[x] ^= bits;
            return;
        }
        let next = at[c2 * 128 + x] as usize;
        at[c2 * 128 + x] = e as u16;
        (v, c, e) = (x, c2, next);
    }
}

/// [`AlternatingPaths::color_items`] for [`TwoTier`], written out over the flows and
/// outputs: with `ends` and `colored` as closures, the compiler kept the captured
/// slices on the stack and reloaded them for every packet.
#[inline(never)]
fn two_tier(
    alt: &mut AlternatingPaths,
    flows: &[Flow],
    rack_of: &[u32],
    phys: &[Option<u32>; 64],
    out: &mut [Option<u32>],
    colors: u32,
) -> Result<(), PathError> {
    debug_assert!(colors <= 64 && flows.len() < NONE as usize);
    let all = if colors == 0 {
        0
    } else {
        u64::MAX >> (64 - colors.min(64))
    };
    alt.free = [all; 2 * MAX_VERTICES];
    let (free, at) = (&mut alt.free, &mut alt.at);
    let mut cur = 0usize;
    let mut fu = free[0];
    let out = &mut out[..flows.len()];
    for i in 0..flows.len() {
        let f = flows[i];
        let (Some(&rs), Some(&rd)) = (rack_of.get(f.src as usize), rack_of.get(f.dst as usize))
        else {
            return Err(unknown_endpoint(f, rack_of.len()));
        };
        if rs == rd {
            continue;
        }
        // Racks below 64 (checked in `TwoTier::new`); the masks make indexing provably
        // in bounds.
        let (u, w) = (rs as usize & 63, 64 | (rd as usize & 63));
        if u != cur {
            free[cur] = fu;
            cur = u;
            fu = free[u];
        }
        let mut fw = free[w];
        let mut common = fu & fw;
        if common == 0 {
            if fu == 0 || fw == 0 {
                let ends = |i: usize| {
                    let f = flows[i];
                    match (rack_of.get(f.src as usize), rack_of.get(f.dst as usize)) {
                        (Some(&rs), Some(&rd)) if rs != rd => Ok(Some((rs, rd))),
                        (Some(_), Some(_)) => Ok(None),
                        _ => Err(unknown_endpoint(f, rack_of.len())),
                    }
                };
                return Err(out_of_colors(flows.len(), colors, &ends));
            }
            let (a, b) = (fu.trailing_zeros(), fw.trailing_zeros());
            let on_path = |e: usize| {
                let f = flows[e];
                let (rs, rd) = (rack_of[f.src as usize], rack_of[f.dst as usize]);
                (rs as usize & 63, 64 | (rd as usize & 63))
            };
            flip(
                free,
                at,
                &on_path,
                &mut |e, c| out[e] = phys[c as usize & 63],
                w,
                a,
                b,
            );
            // The path never reaches u (bipartite): only w's mask changed.
            fw = free[w];
            common = 1 << a;
        }
        let c = common.trailing_zeros() as usize;
        fu &= !(1 << c);
        free[w] = fw & !(1 << c);
        // Color-major: the two entries of a color are one `w - u` apart.
        at[c * 128 + u] = i as u16;
        at[c * 128 + w] = i as u16;
        out[i] = phys[c];
    }
    free[cur] = fu;
    Ok(())
}

/// Core switches with heterogeneous link rates as virtual switches (§4): a core whose
/// rack links carry `m` times the endpoint rate becomes `m` virtual cores; a color is a
/// virtual core, and all of a core's virtual copies route through the physical one.
#[derive(Clone, Debug)]
pub struct VirtualCores {
    phys: Vec<u32>,
}

impl VirtualCores {
    /// `multiples[c]` = rack-link rate of core `c` / endpoint link rate.
    pub fn new(multiples: &[u32]) -> Self {
        let phys = multiples
            .iter()
            .enumerate()
            .flat_map(|(c, &m)| std::iter::repeat_n(c as u32, m as usize))
            .collect();
        VirtualCores { phys }
    }
    /// Homogeneous: `cores` cores at the endpoint rate.
    pub fn uniform(cores: u32) -> Self {
        Self::new(&vec![1; cores as usize])
    }
    pub fn colors(&self) -> u32 {
        self.phys.len() as u32
    }
    /// The physical core of virtual core (color) `color`; `None` past [`Self::colors`].
    pub fn physical(&self, color: u32) -> Option<u32> {
        self.phys.get(color as usize).copied()
    }

    /// [`VirtualCores::physical`] of a color a colorer handed out (below `colors()`).
    #[inline]
    fn core_of(&self, color: u32) -> u32 {
        self.phys[color as usize]
    }
}

/// Two-tier path selection: racks under core switches (§4, Fig. 5).
/// Which edge-coloring algorithm path selection uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coloring {
    /// Pad to regular, Euler splits (+ one perfect matching per odd level): the paper's.
    EulerSplit,
    /// Alternating paths: faster on the paper's sizes (see `arbiter-bench`).
    AlternatingPaths,
}

pub struct TwoTier {
    rack_of: Vec<u32>,
    racks: usize,
    cores: VirtualCores,
    algo: Coloring,
    colorer: EdgeColoring,
    alt: AlternatingPaths,
    edges: Vec<(u32, u32)>,
    which: Vec<u32>,
    colors: Vec<u32>,
    /// Physical core of each color, as the output value (64 entries: indexing needs no
    /// bounds check, and a packet's output is one copy).
    phys: [Option<u32>; 64],
}

impl TwoTier {
    pub fn new(rack_of: Vec<u32>, cores: VirtualCores) -> Result<Self, PathError> {
        let racks = rack_of.iter().max().map_or(0, |&r| r as usize + 1);
        if racks > MAX_VERTICES {
            return Err(PathError::BadVertex(racks as u32));
        }
        let phys = std::array::from_fn(|c| Some(cores.phys.get(c).copied().unwrap_or(0)));
        Ok(TwoTier {
            rack_of,
            racks,
            cores,
            algo: Coloring::AlternatingPaths,
            colorer: EdgeColoring::new(),
            alt: AlternatingPaths::new(),
            edges: Vec::new(),
            which: Vec::new(),
            colors: Vec::new(),
            phys,
        })
    }

    /// Choose the edge-coloring algorithm (default: alternating paths).
    pub fn set_coloring(&mut self, algo: Coloring) {
        self.algo = algo;
    }

    /// Pick a core for every packet of one timeslot's matching: `out[i]` is the physical
    /// core of `flows[i]`, or `None` if it stays inside its rack. An endpoint outside the
    /// fabric is [`PathError::UnknownEndpoint`]; a rack with more inter-rack packets than
    /// paths, [`PathError::DegreeExceedsColors`].
    pub fn select(&mut self, flows: &[Flow], out: &mut Vec<Option<u32>>) -> Result<(), PathError> {
        let c = self.cores.colors();
        if self.algo == Coloring::AlternatingPaths && c <= 64 && flows.len() < NONE as usize {
            // Any proper coloring with at most `c` colors is a valid assignment of
            // paths: color with all of them, not just the largest degree's worth (the
            // paper pads to the largest degree D and uses D). A rack with more packets
            // than paths is found when its colors run out.
            out.clear();
            out.resize(flows.len(), None);
            let (phys, rack_of) = (&self.phys, &self.rack_of[..]);
            let out = &mut out[..flows.len()];
            return two_tier(&mut self.alt, flows, rack_of, phys, out, c);
        }
        // Inter-rack packets only, written branch-free into buffers sized for all (kept
        // at the largest size seen: no clearing), through local slices so that their
        // bounds stay in registers.
        if self.edges.len() < flows.len() {
            self.edges.resize(flows.len(), (0, 0));
            self.which.resize(flows.len(), 0);
        }
        out.clear();
        out.resize(flows.len(), None);
        let (edges, which) = (&mut self.edges[..], &mut self.which[..]);
        let rack_of = &self.rack_of[..];
        let mut m = 0;
        for (i, f) in flows.iter().enumerate() {
            let (Some(&rs), Some(&rd)) = (rack_of.get(f.src as usize), rack_of.get(f.dst as usize))
            else {
                return Err(unknown_endpoint(*f, rack_of.len()));
            };
            edges[m] = (rs, rd);
            which[m] = i as u32;
            m += (rs != rd) as usize;
        }
        // Euler splits (chosen, or past the alternating-path coloring's limits of 64
        // colors and 65,535 packets).
        let (edges, which) = (&self.edges[..m], &self.which[..m]);
        self.colorer.color(self.racks, edges, c, &mut self.colors)?;
        for (&i, &c) in which.iter().zip(&self.colors) {
            out[i as usize] = Some(self.cores.core_of(c));
        }
        Ok(())
    }
}

/// A three-tier path: aggregation plane (switch index within the pod) and, for traffic
/// between pods, the core within that plane's group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Path3 {
    pub agg: u32,
    pub core: Option<u32>,
}

/// Three-tier hierarchical assignment (§4, [21 §IV]): the ToR graph's coloring picks the
/// aggregation switch, then for each aggregation plane the graph of pods picks the core.
/// Racks `0..racks_per_pod` form pod 0, and so on; every ToR links to one aggregation
/// switch per plane, every aggregation switch of plane `a` to the plane's cores.
pub struct ThreeTier {
    rack_of: Vec<u32>,
    racks_per_pod: u32,
    pods: usize,
    racks: usize,
    aggs: VirtualCores,
    cores: VirtualCores,
    colorer: EdgeColoring,
    edges: Vec<(u32, u32)>,
    which: Vec<u32>,
    colors: Vec<u32>,
    plane_edges: Vec<(u32, u32)>,
    plane_which: Vec<u32>,
    plane_colors: Vec<u32>,
}

impl ThreeTier {
    /// `rack_of[e]` is endpoint e's rack; pods of `racks_per_pod` racks (at least one:
    /// 0 is [`PathError::ZeroRacksPerPod`]), at most 64 racks and pods.
    pub fn new(
        rack_of: Vec<u32>,
        racks_per_pod: u32,
        aggs: VirtualCores,
        cores: VirtualCores,
    ) -> Result<Self, PathError> {
        if racks_per_pod == 0 {
            // Was taken as 1: a configuration that means nothing is refused, not guessed.
            return Err(PathError::ZeroRacksPerPod);
        }
        let racks = rack_of.iter().max().map_or(0, |&r| r as usize + 1);
        let pods = racks.div_ceil(racks_per_pod as usize);
        if racks > MAX_VERTICES || pods > MAX_VERTICES {
            return Err(PathError::BadVertex(racks as u32));
        }
        Ok(ThreeTier {
            rack_of,
            racks_per_pod,
            pods,
            racks,
            aggs,
            cores,
            colorer: EdgeColoring::new(),
            edges: Vec::new(),
            which: Vec::new(),
            colors: Vec::new(),
            plane_edges: Vec::new(),
            plane_which: Vec::new(),
            plane_colors: Vec::new(),
        })
    }

    /// A path for every packet of one timeslot's matching: `out[i]` for `flows[i]`,
    /// `None` if it stays inside its rack. Errors as [`TwoTier::select`]'s.
    pub fn select(
        &mut self,
        flows: &[Flow],
        out: &mut Vec<Option<Path3>>,
    ) -> Result<(), PathError> {
        self.edges.clear();
        self.which.clear();
        out.clear();
        for (i, &f) in flows.iter().enumerate() {
            let (Some(&rs), Some(&rd)) = (
                self.rack_of.get(f.src as usize),
                self.rack_of.get(f.dst as usize),
            ) else {
                out.clear();
                return Err(unknown_endpoint(f, self.rack_of.len()));
            };
            out.push(None);
            if rs != rd {
                self.edges.push((rs, rd));
                self.which.push(i as u32);
            }
        }
        // Tier 1: ToR graph -> aggregation switch (virtual colors -> physical agg).
        self.colorer.color(
            self.racks,
            &self.edges,
            self.aggs.colors(),
            &mut self.colors,
        )?;
        for (k, &i) in self.which.iter().enumerate() {
            out[i as usize] = Some(Path3 {
                agg: self.colors[k],
                core: None,
            });
        }
        // Tier 2: per virtual aggregation plane, the pod graph -> core.
        let rpp = self.racks_per_pod;
        for plane in 0..self.aggs.colors() {
            self.plane_edges.clear();
            self.plane_which.clear();
            for (k, &(rs, rd)) in self.edges.iter().enumerate() {
                if self.colors[k] == plane && rs / rpp != rd / rpp {
                    self.plane_edges.push((rs / rpp, rd / rpp));
                    self.plane_which.push(self.which[k]);
                }
            }
            self.colorer.color(
                self.pods,
                &self.plane_edges,
                self.cores.colors(),
                &mut self.plane_colors,
            )?;
            for (k, &i) in self.plane_which.iter().enumerate() {
                if let Some(p) = out[i as usize].as_mut() {
                    p.core = Some(self.cores.core_of(self.plane_colors[k]));
                }
            }
        }
        for p in out.iter_mut().flatten() {
            p.agg = self.aggs.core_of(p.agg);
        }
        Ok(())
    }
}
