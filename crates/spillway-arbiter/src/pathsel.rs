//! Path selection by edge coloring (Fastpass §4).
//!
//! A timeslot's matching becomes a bipartite multigraph of source rack → destination
//! rack; a proper edge coloring with one color per core switch (path) puts at most one
//! packet on every rack–core link. Two colorers:
//!
//! - [`EdgeColoring`], the paper's: the multigraph is padded with dummy edges to a
//!   D-regular graph (D = its largest degree, as the original does), then split: an Euler
//!   split halves an even-degree regular graph (§4: walk cycles, alternate edges); odd
//!   degree peels off one perfect matching first (Kuhn's augmenting paths; a regular
//!   bipartite multigraph always has one). Power-of-two degree needs only Euler splits;
//!   any degree is handled, and exactly D colors are used. The graph is held as a count
//!   matrix plus, during a split, one bitmask row per vertex for the odd-multiplicity
//!   edges: the walks are find-first-set on words (§4: "size-optimized bitmap-based data
//!   structure"). A row is `n.div_ceil(64)` words, so any number of racks up to
//!   [`MAX_VERTICES`] is colored; the count matrices are n x n (O(n^2) per split).
//! - [`AlternatingPaths`] (König / Gabow): one pass over the edges with a u64 free-color
//!   mask per vertex, so at most 64 colors, but any number of vertices: up to 64 a side
//!   its tables are inline (the paper's sizes, and the benchmark's); beyond, tables sized
//!   to the graph at first use and reused (O(64 n) memory, nothing allocated in steady
//!   state).
//!
//! Three tiers (§4, [21 §IV]) color the ToR graph into aggregation planes, then each
//! plane's pod graph into cores: a k-ary fat tree has k/2 planes and k/2 cores per plane,
//! so both tiers fit the alternating-path colorer's 64 colors up to k = 128.

use crate::demand::Flow;

/// Largest number of vertices (racks, pods) on either side of a colored graph. Past one
/// word (64) bitmask rows take several words; the limit keeps [`EdgeColoring`]'s n x n
/// count matrices (u16) at 32 MB at most, and vertex ids in u16. A k = 64 fat tree has
/// 2048 racks.
pub const MAX_VERTICES: usize = 4096;

/// Vertices a side that fit one u64 mask word: up to here the alternating-path
/// colorer's tables are inline.
const WORD: usize = 64;

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

/// [`PathError::BadVertex`] for a vertex count or id that may not fit a u32.
fn bad_vertex(v: usize) -> PathError {
    PathError::BadVertex(u32::try_from(v).unwrap_or(u32::MAX))
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
    /// Words per bitmask row: `n.div_ceil(64)`.
    words: usize,
    /// Count matrices (n x n), reused across calls.
    pool: Vec<Vec<u16>>,
    /// Work stack: (matrix, its regular degree).
    stack: Vec<(Vec<u16>, u32)>,
    /// Perfect matchings found, `n` entries each: right vertex of each left vertex.
    perms: Vec<u16>,
    /// Per (left, right): colors still to hand out, as a linked list through `next`.
    head: Vec<u16>,
    next: Vec<u16>,
    /// Degrees of the left and right vertices while padding.
    dl: Vec<u32>,
    dr: Vec<u32>,
    /// During an Euler split, the odd-multiplicity edges: per left vertex a row of its
    /// right neighbours, per right vertex a row of its left ones (`words` words each).
    odd_l: Vec<u64>,
    odd_r: Vec<u64>,
    /// Kuhn's matching: adjacency rows, each right vertex's partner (`NONE`: free), the
    /// free right vertices, those visited by one search, and its path as (left vertex,
    /// the right vertex it was reached through).
    adj: Vec<u64>,
    match_r: Vec<u16>,
    free_r: Vec<u64>,
    visited: Vec<u64>,
    path: Vec<(u16, u16)>,
}

const NONE: u16 = u16::MAX;

/// Most colors [`EdgeColoring`] hands out: edge multiplicities and colors are kept as
/// u16, colors below `u16::MAX` (the end-of-list mark).
pub const EULER_MAX_COLORS: u32 = NONE as u32;

/// The lowest set bit of a multi-word row.
#[inline]
fn lowest(row: &[u64]) -> Option<usize> {
    row.iter()
        .position(|&x| x != 0)
        .map(|j| j * 64 + row[j].trailing_zeros() as usize)
}

/// Bit `bit` of row `v` in rows of `w` words.
#[inline]
fn set_bit(rows: &mut [u64], w: usize, v: usize, bit: usize) {
    rows[v * w + bit / 64] |= 1 << (bit % 64);
}

#[inline]
fn clear_bit(rows: &mut [u64], w: usize, v: usize, bit: usize) {
    rows[v * w + bit / 64] &= !(1 << (bit % 64));
}

impl EdgeColoring {
    pub fn new() -> Self {
        Self::default()
    }

    /// Color `edges` (left, right) of a bipartite multigraph with `n` vertices per side
    /// (at most [`MAX_VERTICES`]) using at most `colors` colors (and at most
    /// [`EULER_MAX_COLORS`]); `out[i]` is the color of `edges[i]`. Returns the number of
    /// colors used (the largest degree).
    pub fn color(
        &mut self,
        n: usize,
        edges: &[(u32, u32)],
        colors: u32,
        out: &mut Vec<u32>,
    ) -> Result<u32, PathError> {
        if n > MAX_VERTICES {
            return Err(bad_vertex(n));
        }
        self.n = n;
        self.words = n.div_ceil(64);
        out.clear();
        // Degrees first: the count matrix holds u16 multiplicities, so a degree beyond
        // them is refused before anything is counted there.
        self.dl.clear();
        self.dl.resize(n, 0);
        self.dr.clear();
        self.dr.resize(n, 0);
        for &(l, r) in edges {
            if l as usize >= n || r as usize >= n {
                return Err(PathError::BadVertex(l.max(r)));
            }
            self.dl[l as usize] += 1;
            self.dr[r as usize] += 1;
        }
        let deg = self.dl.iter().chain(&self.dr).copied().max().unwrap_or(0);
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
        let (dl, dr) = (&mut self.dl, &mut self.dr);
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
        let (n, w) = (self.n, self.words);
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
        let (odd_l, odd_r) = (&mut self.odd_l, &mut self.odd_r);
        odd_l.clear();
        odd_l.resize(n * w, 0);
        odd_r.clear();
        odd_r.resize(n * w, 0);
        for l in 0..n {
            let row = &mut m[l * n..(l + 1) * n];
            let brow = &mut b[l * n..(l + 1) * n];
            for j in 0..w {
                let lo = j * 64;
                let mut bits = 0u64;
                for r in lo..(lo + 64).min(n) {
                    let x = row[r];
                    row[r] = x >> 1;
                    brow[r] = x >> 1;
                    bits |= ((x & 1) as u64) << (r - lo);
                }
                odd_l[l * w + j] = bits;
                let mut bb = bits;
                while bb != 0 {
                    let r = lo + bb.trailing_zeros() as usize;
                    bb &= bb - 1;
                    set_bit(odd_r, w, r, l);
                }
            }
        }
        for start in 0..n {
            while lowest(&odd_l[start * w..(start + 1) * w]).is_some() {
                let mut l = start;
                // Leaving a left vertex: edge to m; leaving a right vertex: edge to b.
                while let Some(r) = lowest(&odd_l[l * w..(l + 1) * w]) {
                    clear_bit(odd_l, w, l, r);
                    clear_bit(odd_r, w, r, l);
                    m[l * n + r] += 1;
                    // r had an even number of odd edges, one of them just taken.
                    let Some(l2) = lowest(&odd_r[r * w..(r + 1) * w]) else {
                        unreachable!("a vertex of odd degree in an Euler split")
                    };
                    clear_bit(odd_r, w, r, l2);
                    clear_bit(odd_l, w, l2, r);
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
        let (n, w) = (self.n, self.words);
        self.adj.clear();
        self.adj.resize(n * w, 0);
        for l in 0..n {
            for r in 0..n {
                if m[l * n + r] > 0 {
                    set_bit(&mut self.adj, w, l, r);
                }
            }
        }
        self.match_r.clear();
        self.match_r.resize(n, NONE);
        self.free_r.clear();
        self.free_r.resize(w, 0);
        for r in 0..n {
            set_bit(&mut self.free_r, w, 0, r);
        }
        for l in 0..n {
            // Cheap first try: a free neighbour.
            let row = &self.adj[l * w..(l + 1) * w];
            let r = match (0..w).find(|&j| row[j] & self.free_r[j] != 0) {
                Some(j) => {
                    let r = j * 64 + (row[j] & self.free_r[j]).trailing_zeros() as usize;
                    self.match_r[r] = l as u16;
                    r
                }
                None => augment(
                    l,
                    w,
                    &self.adj,
                    &mut self.match_r,
                    &mut self.visited,
                    &mut self.path,
                )
                .expect("regular bipartite multigraph without a perfect matching"),
            };
            clear_bit(&mut self.free_r, w, 0, r);
        }
        let base = self.perms.len();
        self.perms.resize(base + n, 0);
        for r in 0..n {
            let l = self.match_r[r] as usize;
            self.perms[base + l] = r as u16;
            m[l * n + r] -= 1;
        }
    }
}

/// Kuhn's augmenting path from the unmatched left vertex `root`, depth first with an
/// explicit stack (a path can be n vertices long: no recursion). Returns the free right
/// vertex it matched, `None` if there is no augmenting path.
fn augment(
    root: usize,
    w: usize,
    adj: &[u64],
    match_r: &mut [u16],
    visited: &mut Vec<u64>,
    path: &mut Vec<(u16, u16)>,
) -> Option<usize> {
    visited.clear();
    visited.resize(w, 0);
    path.clear();
    path.push((root as u16, NONE));
    while let Some(&(l, _)) = path.last() {
        let row = &adj[l as usize * w..(l as usize + 1) * w];
        let Some(j) = (0..w).find(|&j| row[j] & !visited[j] != 0) else {
            path.pop();
            continue;
        };
        let r = j * 64 + (row[j] & !visited[j]).trailing_zeros() as usize;
        visited[j] |= 1 << (r % 64);
        match match_r[r] {
            NONE => {
                // Flip the path: r to the last left vertex, and each left vertex's old
                // partner to the left vertex that reached it.
                let mut to = r;
                while let Some((l, via)) = path.pop() {
                    match_r[to] = l;
                    to = via as usize;
                }
                return Some(r);
            }
            o => path.push((o, r as u16)),
        }
    }
    None
}

/// Edge coloring by alternating paths (König's proof, as in Gabow's simple algorithm):
/// color edges one by one; if no color is free at both ends, take a free at the source
/// and b free at the destination, swap a and b along the a/b path from the destination
/// (it cannot reach the source in a bipartite graph), then use a. Any degree, exactly
/// D colors, no padding. Free colors per vertex are u64 bitmasks (find-first-set), so
/// the common case is one AND; at most 64 colors. Any number of vertices up to
/// [`MAX_VERTICES`]: up to 64 a side the tables are inline, beyond they are sized to the
/// largest graph seen and reused.
pub struct AlternatingPaths {
    narrow: Narrow,
    wide: Wide,
    /// Degrees for [`AlternatingPaths::color`]'s check: left 0..n, right n..2n.
    deg: Vec<u32>,
}

/// The alternating-path colorer's state for one graph: per vertex its free colors, per
/// (color, vertex) the item (edge) holding that color there. An item-table entry is valid
/// only where the color is not free at the vertex, so it never needs clearing between
/// calls.
trait Tables {
    /// Items the item table can name: indices below this.
    const MAX_ITEMS: usize;
    /// Mask index of left vertex `l` and of right vertex `r` (both below the graph's n).
    fn left(&self, l: u32) -> usize;
    fn right(&self, r: u32) -> usize;
    /// Number of mask indices.
    fn vertices(&self) -> usize;
    /// Every vertex's free colors set to `all`.
    fn reset(&mut self, all: u64);
    fn free(&self, v: usize) -> u64;
    fn set_free(&mut self, v: usize, mask: u64);
    /// The item holding color `c` at vertex `v`.
    fn at(&self, c: usize, v: usize) -> usize;
    fn set_at(&mut self, c: usize, v: usize, item: usize);
}

/// At most 64 vertices a side, inline: left vertices at 0..64, right at 64..128, so a
/// vertex id masked to 6 bits indexes provably in bounds. The item table is color-major
/// (an edge's two entries for its color are one `w - u` apart) and sits next to the masks
/// (one base register addresses both).
struct Narrow {
    free: [u64; 2 * WORD],
    at: [u16; 2 * WORD * 64],
}

impl Tables for Narrow {
    const MAX_ITEMS: usize = NONE as usize;
    #[inline(always)]
    fn left(&self, l: u32) -> usize {
        l as usize & 63
    }
    #[inline(always)]
    fn right(&self, r: u32) -> usize {
        64 | (r as usize & 63)
    }
    #[inline(always)]
    fn vertices(&self) -> usize {
        2 * WORD
    }
    #[inline(always)]
    fn reset(&mut self, all: u64) {
        self.free = [all; 2 * WORD];
    }
    #[inline(always)]
    fn free(&self, v: usize) -> u64 {
        self.free[v]
    }
    #[inline(always)]
    fn set_free(&mut self, v: usize, mask: u64) {
        self.free[v] = mask;
    }
    #[inline(always)]
    fn at(&self, c: usize, v: usize) -> usize {
        self.at[c * 128 + v] as usize
    }
    #[inline(always)]
    fn set_at(&mut self, c: usize, v: usize, item: usize) {
        self.at[c * 128 + v] = item as u16;
    }
}

/// Any number of vertices: masks and item table sized to the largest graph seen, grown
/// on demand and reused (never shrunk).
#[derive(Default)]
struct Wide {
    free: Vec<u64>,
    at: Vec<u32>,
}

/// [`Wide`]'s tables for a graph of `n` vertices a side: left vertices at 0..n, right at
/// n..2n; the item table color-major with a stride of 2n, items as u32.
struct WideView<'a> {
    n: usize,
    free: &'a mut [u64],
    at: &'a mut [u32],
}

impl Wide {
    fn view(&mut self, n: usize) -> WideView<'_> {
        let v = 2 * n;
        if self.free.len() < v {
            self.free.resize(v, 0);
        }
        if self.at.len() < 64 * v {
            self.at.resize(64 * v, 0);
        }
        WideView {
            n,
            free: &mut self.free[..v],
            at: &mut self.at[..64 * v],
        }
    }
}

impl Tables for WideView<'_> {
    const MAX_ITEMS: usize = u32::MAX as usize;
    #[inline(always)]
    fn left(&self, l: u32) -> usize {
        l as usize
    }
    #[inline(always)]
    fn right(&self, r: u32) -> usize {
        self.n + r as usize
    }
    #[inline(always)]
    fn vertices(&self) -> usize {
        2 * self.n
    }
    #[inline(always)]
    fn reset(&mut self, all: u64) {
        self.free.fill(all);
    }
    #[inline(always)]
    fn free(&self, v: usize) -> u64 {
        self.free[v]
    }
    #[inline(always)]
    fn set_free(&mut self, v: usize, mask: u64) {
        self.free[v] = mask;
    }
    #[inline(always)]
    fn at(&self, c: usize, v: usize) -> usize {
        self.at[c * 2 * self.n + v] as usize
    }
    #[inline(always)]
    fn set_at(&mut self, c: usize, v: usize, item: usize) {
        self.at[c * 2 * self.n + v] = item as u32;
    }
}

impl Default for AlternatingPaths {
    fn default() -> Self {
        AlternatingPaths {
            narrow: Narrow {
                free: [0; 2 * WORD],
                at: [0; 2 * WORD * 64],
            },
            wide: Wide::default(),
            deg: Vec::new(),
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
            return Err(bad_vertex(n));
        }
        let deg = &mut self.deg;
        deg.clear();
        deg.resize(2 * n, 0);
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
        self.color_with(n, edges.len(), d, |e| Ok(edges[e]), |i, c| out[i] = c)?;
        Ok(d)
    }

    /// Color items `0..len` with colors `0..colors` (`colors <= 64`): `ends(i)` gives
    /// item i's vertices (left and right, both below `n <= MAX_VERTICES`) or an error;
    /// `colored(i, c)` is called whenever an item's color is set or changed. Fails, on a
    /// cold path, if a vertex has more than `colors` items (or `ends` fails).
    ///
    /// No length limit: every item is colored, so by the time an item's index reached
    /// what the item table can name (65,535 inline), some vertex of at most 64 would
    /// have had more than 64 items, and the call would have failed there.
    pub(crate) fn color_with<E>(
        &mut self,
        n: usize,
        len: usize,
        colors: u32,
        ends: E,
        colored: impl FnMut(usize, u32),
    ) -> Result<(), PathError>
    where
        E: Fn(usize) -> Result<(u32, u32), PathError>,
    {
        debug_assert!(n <= MAX_VERTICES);
        if n <= WORD {
            color_items(&mut self.narrow, len, colors, ends, colored)
        } else {
            color_items(&mut self.wide.view(n), len, colors, ends, colored)
        }
    }
}

/// The free-color mask of `colors` colors (at most 64).
#[inline(always)]
fn all_colors(colors: u32) -> u64 {
    if colors == 0 {
        0
    } else {
        u64::MAX >> (64 - colors.min(64))
    }
}

/// The coloring loop of [`AlternatingPaths::color_with`] on tables `t`.
#[inline(always)]
fn color_items<T: Tables, E>(
    t: &mut T,
    len: usize,
    colors: u32,
    ends: E,
    mut colored: impl FnMut(usize, u32),
) -> Result<(), PathError>
where
    E: Fn(usize) -> Result<(u32, u32), PathError>,
{
    debug_assert!(colors <= 64);
    t.reset(all_colors(colors));
    // Only colored items are on alternating paths, and those have vertices.
    let on_path = |e: usize| match ends(e) {
        Ok(lr) => lr,
        Err(_) => unreachable!("an item on an alternating path has been colored"),
    };
    // The source's free mask stays in a register while consecutive items share the
    // source (a matching listed by endpoint): otherwise every color choice would wait
    // on the previous one's store to the same word.
    let mut cur = t.left(0);
    let mut fu = t.free(cur);
    for i in 0..len {
        let (l, r) = ends(i)?;
        let (u, w) = (t.left(l), t.right(r));
        if u != cur {
            t.set_free(cur, fu);
            cur = u;
            fu = t.free(u);
        }
        let mut fw = t.free(w);
        let mut common = fu & fw;
        if common == 0 {
            if fu == 0 || fw == 0 {
                return Err(out_of_colors(t, len, colors, &|e| ends(e).map(Some)));
            }
            let (a, b) = (fu.trailing_zeros(), fw.trailing_zeros());
            flip(t, &on_path, &mut colored, w, a, b);
            // The path never reaches u (bipartite): only w's mask changed.
            fw = t.free(w);
            common = 1 << a;
        }
        let c = common.trailing_zeros() as usize;
        fu &= !(1 << c);
        t.set_free(w, fw & !(1 << c));
        t.set_at(c, u, i);
        t.set_at(c, w, i);
        colored(i, c as u32);
    }
    t.set_free(cur, fu);
    Ok(())
}

/// Out of colors: the largest degree, or an error of `ends` further on (as when items are
/// checked before coloring).
#[cold]
#[inline(never)]
fn out_of_colors<T: Tables>(
    t: &T,
    len: usize,
    colors: u32,
    ends: &impl Fn(usize) -> Result<Option<(u32, u32)>, PathError>,
) -> PathError {
    // An error, not the steady state: counting here allocates.
    let mut deg = vec![0u32; t.vertices()];
    for e in 0..len {
        match ends(e) {
            Ok(Some((l, r))) => {
                deg[t.left(l)] += 1;
                deg[t.right(r)] += 1;
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
/// `ends(e)` is item e's (left, right) vertex ids.
#[cold]
#[inline(never)]
fn flip<T: Tables>(
    t: &mut T,
    ends: &impl Fn(usize) -> (u32, u32),
    colored: &mut impl FnMut(usize, u32),
    w: usize,
    a: u32,
    b: u32,
) {
    let (ab, bits) = ((a ^ b) as usize, (1u64 << a) | (1u64 << b));
    t.set_free(w, t.free(w) ^ bits);
    let (mut v, mut c) = (w, a as usize);
    let mut e = t.at(c, v);
    loop {
        // Edge e between v and x goes from color c to c2.
        let (l, r) = ends(e);
        let (l, r) = (t.left(l), t.right(r));
        let x = if l == v { r } else { l };
        let c2 = c ^ ab;
        t.set_at(c2, v, e);
        colored(e, c2 as u32);
        if t.free(x) >> c2 & 1 == 1 {
            // x has no c2 edge: the path ends; at x, c is now free and c2 used.
            t.set_at(c2, x, e);
            t.set_free(x, t.free(x) ^ bits);
            return;
        }
        let next = t.at(c2, x);
        t.set_at(c2, x, e);
        (v, c, e) = (x, c2, next);
    }
}

/// [`color_items`] for [`TwoTier`], written out over the flows and outputs: with `ends`
/// and `colored` as closures, the compiler kept the captured slices on the stack and
/// reloaded them for every packet. Flow indices are items: fewer than `T::MAX_ITEMS`
/// flows (callers check), racks below the tables' n.
#[inline(never)]
fn two_tier<T: Tables>(
    t: &mut T,
    flows: &[Flow],
    rack_of: &[u32],
    phys: &[Option<u32>; 64],
    out: &mut [Option<u32>],
    colors: u32,
) -> Result<(), PathError> {
    debug_assert!(colors <= 64 && flows.len() < T::MAX_ITEMS);
    t.reset(all_colors(colors));
    let mut cur = t.left(0);
    let mut fu = t.free(cur);
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
        // Inline tables: racks below 64 (checked in `TwoTier::select`); the masks make
        // indexing provably in bounds.
        let (u, w) = (t.left(rs), t.right(rd));
        if u != cur {
            t.set_free(cur, fu);
            cur = u;
            fu = t.free(u);
        }
        let mut fw = t.free(w);
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
                return Err(out_of_colors(t, flows.len(), colors, &ends));
            }
            let (a, b) = (fu.trailing_zeros(), fw.trailing_zeros());
            let on_path = |e: usize| {
                let f = flows[e];
                (rack_of[f.src as usize], rack_of[f.dst as usize])
            };
            flip(
                t,
                &on_path,
                &mut |e, c| out[e] = phys[c as usize & 63],
                w,
                a,
                b,
            );
            // The path never reaches u (bipartite): only w's mask changed.
            fw = t.free(w);
            common = 1 << a;
        }
        let c = common.trailing_zeros() as usize;
        fu &= !(1 << c);
        t.set_free(w, fw & !(1 << c));
        // Color-major: the two entries of a color are one `w - u` apart.
        t.set_at(c, u, i);
        t.set_at(c, w, i);
        out[i] = phys[c];
    }
    t.set_free(cur, fu);
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

/// Which edge-coloring algorithm path selection uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coloring {
    /// Pad to regular, Euler splits (+ one perfect matching per odd level): the paper's.
    EulerSplit,
    /// Alternating paths: faster on the paper's sizes (see `arbiter-bench`).
    AlternatingPaths,
}

/// Two-tier path selection: racks under core switches (§4, Fig. 5). Any number of racks
/// up to [`MAX_VERTICES`].
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
    /// `rack_of[e]` is endpoint e's rack; at most [`MAX_VERTICES`] racks, else
    /// [`PathError::BadVertex`].
    pub fn new(rack_of: Vec<u32>, cores: VirtualCores) -> Result<Self, PathError> {
        let racks = rack_of.iter().max().map_or(0, |&r| r as usize + 1);
        if racks > MAX_VERTICES {
            return Err(bad_vertex(racks));
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
        if self.algo == Coloring::AlternatingPaths && c <= 64 {
            // Any proper coloring with at most `c` colors is a valid assignment of
            // paths: color with all of them, not just the largest degree's worth (the
            // paper pads to the largest degree D and uses D). A rack with more packets
            // than paths is found when its colors run out.
            out.clear();
            out.resize(flows.len(), None);
            let (phys, rack_of) = (&self.phys, &self.rack_of[..]);
            let out = &mut out[..flows.len()];
            // Up to 64 racks the inline tables (the paper's sizes); beyond, or past the
            // 65,535 packets their u16 entries name, tables sized to the racks.
            if self.racks <= WORD && flows.len() < Narrow::MAX_ITEMS {
                return two_tier(&mut self.alt.narrow, flows, rack_of, phys, out, c);
            }
            if flows.len() < WideView::MAX_ITEMS {
                let t = &mut self.alt.wide.view(self.racks);
                return two_tier(t, flows, rack_of, phys, out, c);
            }
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
        // Euler splits (chosen, or past the alternating-path coloring's 64 colors).
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
    algo: Coloring,
    colorer: EdgeColoring,
    alt: AlternatingPaths,
    edges: Vec<(u32, u32)>,
    which: Vec<u32>,
    colors: Vec<u32>,
    plane_edges: Vec<(u32, u32)>,
    plane_which: Vec<u32>,
    plane_colors: Vec<u32>,
    /// Alternating paths: the inter-pod packets (indices into `edges`) grouped by plane,
    /// plane p's ending at `plane_end[p]`.
    by_plane: Vec<u32>,
    plane_end: Vec<u32>,
}

impl ThreeTier {
    /// `rack_of[e]` is endpoint e's rack; pods of `racks_per_pod` racks (at least one:
    /// 0 is [`PathError::ZeroRacksPerPod`]), at most [`MAX_VERTICES`] racks.
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
        // Pods are never more than racks.
        if racks > MAX_VERTICES {
            return Err(bad_vertex(racks));
        }
        let pods = racks.div_ceil(racks_per_pod as usize);
        Ok(ThreeTier {
            rack_of,
            racks_per_pod,
            pods,
            racks,
            aggs,
            cores,
            algo: Coloring::AlternatingPaths,
            colorer: EdgeColoring::new(),
            alt: AlternatingPaths::new(),
            edges: Vec::new(),
            which: Vec::new(),
            colors: Vec::new(),
            plane_edges: Vec::new(),
            plane_which: Vec::new(),
            plane_colors: Vec::new(),
            by_plane: Vec::new(),
            plane_end: Vec::new(),
        })
    }

    /// Choose the edge-coloring algorithm (default: alternating paths, used when both
    /// tiers have at most 64 virtual switches; Euler splits otherwise).
    pub fn set_coloring(&mut self, algo: Coloring) {
        self.algo = algo;
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
        if self.algo == Coloring::AlternatingPaths
            && self.aggs.colors() <= 64
            && self.cores.colors() <= 64
        {
            self.select_alternating(out)
        } else {
            self.select_euler(out)
        }
    }

    /// Both tiers by alternating paths, each with all its virtual switches (any proper
    /// coloring with at most as many colors as switches is a valid assignment, as in two
    /// tiers).
    fn select_alternating(&mut self, out: &mut [Option<Path3>]) -> Result<(), PathError> {
        let ThreeTier {
            alt,
            edges,
            which,
            colors,
            by_plane,
            plane_end,
            aggs,
            cores,
            racks,
            pods,
            racks_per_pod,
            ..
        } = self;
        let (edges, which, rpp) = (&edges[..], &which[..], *racks_per_pod);
        let planes = aggs.colors() as usize;
        // Tier 1: ToR graph -> aggregation plane (virtual colors -> physical agg).
        colors.clear();
        colors.resize(edges.len(), 0);
        alt.color_with(
            *racks,
            edges.len(),
            planes as u32,
            |k| Ok(edges[k]),
            |k, c| colors[k] = c,
        )?;
        for (&i, &c) in which.iter().zip(colors.iter()) {
            out[i as usize] = Some(Path3 {
                agg: aggs.core_of(c),
                core: None,
            });
        }
        // Tier 2: the planes share no link (a plane's aggregation switches connect to
        // its own cores only), so each plane's pod graph is colored on its own: the
        // inter-pod packets grouped by plane (a counting sort), then one pass per plane.
        plane_end.clear();
        plane_end.resize(planes + 1, 0);
        let inter_pod = |&(rs, rd): &(u32, u32)| rs / rpp != rd / rpp;
        for (e, &c) in edges.iter().zip(colors.iter()) {
            if inter_pod(e) {
                plane_end[c as usize + 1] += 1;
            }
        }
        for p in 1..=planes {
            plane_end[p] += plane_end[p - 1];
        }
        by_plane.resize(plane_end[planes] as usize, 0);
        for (k, (e, &c)) in edges.iter().zip(colors.iter()).enumerate() {
            if inter_pod(e) {
                by_plane[plane_end[c as usize] as usize] = k as u32;
                plane_end[c as usize] += 1;
            }
        }
        // Now plane p's packets end at plane_end[p] and start where plane p - 1's end.
        let mut start = 0;
        for &end in &plane_end[..planes] {
            let items = &by_plane[start..end as usize];
            start = end as usize;
            alt.color_with(
                *pods,
                items.len(),
                cores.colors(),
                |j| {
                    let (rs, rd) = edges[items[j] as usize];
                    Ok((rs / rpp, rd / rpp))
                },
                |j, c| {
                    if let Some(p) = out[which[items[j] as usize] as usize].as_mut() {
                        p.core = Some(cores.core_of(c));
                    }
                },
            )?;
        }
        Ok(())
    }

    /// Both tiers by Euler splits, exactly the largest degree's worth of colors.
    fn select_euler(&mut self, out: &mut [Option<Path3>]) -> Result<(), PathError> {
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
