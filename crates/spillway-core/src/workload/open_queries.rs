//! A query in flight, as the request/response workloads (queries, short/long) keep it:
//! the table of open queries, the tags that name a query's flows, who takes part and
//! the draw of a query's workers, and its requests.

use super::flow::{NewFlow, CLASS_REQUEST};
use crate::rng::Rng;

/// Open queries by slot. A flow's tag carries its query's slot, so a completion finds
/// its query without a search; a finished query's slot is reused, the last freed first.
pub struct OpenQueries<T> {
    slots: Vec<Option<T>>,
    free: Vec<u32>,
    len: usize,
}

impl<T> Default for OpenQueries<T> {
    fn default() -> Self {
        OpenQueries {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }
}

impl<T> OpenQueries<T> {
    /// Opens `query` and returns its slot.
    pub fn insert(&mut self, query: T) -> u32 {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            (self.slots.len() - 1) as u32
        });
        self.slots[slot as usize] = Some(query);
        self.len += 1;
        slot
    }

    pub fn get_mut(&mut self, slot: u32) -> Option<&mut T> {
        self.slots[slot as usize].as_mut()
    }

    /// Closes the query in `slot`, if one is open there, and frees the slot.
    pub fn remove(&mut self, slot: u32) -> Option<T> {
        let query = self.slots[slot as usize].take()?;
        self.free.push(slot);
        self.len -= 1;
        Some(query)
    }

    /// How many queries are open.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The tag of a request of the query in `slot`; its response's tag has the low bit set.
pub fn request_tag(slot: u32) -> u64 {
    (slot as u64) << 1
}

pub fn response_tag(slot: u32) -> u64 {
    request_tag(slot) | 1
}

/// A query flow's tag as (slot, is it the response).
pub fn parse_tag(tag: u64) -> (u32, bool) {
    ((tag >> 1) as u32, tag & 1 == 1)
}

/// Who takes part in queries: the clients that ask, the workers that answer.
pub struct Participants {
    clients: Vec<u32>,
    workers: Vec<u32>,
    /// Scratch: the workers of the query being drawn.
    pick: Vec<u32>,
}

impl Participants {
    pub fn new(clients: &[u32], workers: &[u32]) -> Participants {
        Participants {
            clients: clients.to_vec(),
            workers: workers.to_vec(),
            pick: Vec::new(),
        }
    }

    /// A client, drawn uniformly.
    pub fn client(&self, rng: &mut Rng) -> u32 {
        self.clients[rng.below(self.clients.len() as u64) as usize]
    }

    /// `n` distinct workers other than `client` (all of them if fewer), drawn uniformly
    /// by a partial Fisher-Yates shuffle.
    pub fn workers(&mut self, rng: &mut Rng, client: u32, n: usize) -> &[u32] {
        let pick = &mut self.pick;
        pick.clear();
        pick.extend(self.workers.iter().copied().filter(|&w| w != client));
        let n = n.min(pick.len());
        for i in 0..n {
            let j = i + rng.below((pick.len() - i) as u64) as usize;
            pick.swap(i, j);
        }
        &pick[..n]
    }
}

/// The requests of query `id` (in `slot`) from `client`, one of `size` bytes to each of
/// `workers`.
pub fn requests(
    out: &mut Vec<NewFlow>,
    client: u32,
    workers: &[u32],
    size: u64,
    id: u64,
    slot: u32,
) {
    out.extend(workers.iter().map(|&w| NewFlow {
        src: client,
        dst: w,
        size,
        class: CLASS_REQUEST,
        query: id,
        tag: request_tag(slot),
        priority: None,
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_last_freed_first() {
        let mut open = OpenQueries::default();
        let (a, b, c) = (open.insert('a'), open.insert('b'), open.insert('c'));
        assert_eq!((a, b, c), (0, 1, 2));
        assert_eq!(open.remove(a), Some('a'));
        assert_eq!(open.remove(a), None, "a closed slot frees once");
        assert_eq!(open.remove(c), Some('c'));
        assert_eq!(open.len(), 1);
        assert_eq!(open.insert('d'), c);
        assert_eq!(open.insert('e'), a);
        assert_eq!(open.insert('f'), 3);
        assert_eq!(parse_tag(response_tag(5)), (5, true));
        assert_eq!(parse_tag(request_tag(5)), (5, false));
    }
}
