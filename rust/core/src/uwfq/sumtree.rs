//! An ordered multiset of `(key, id) -> value` with prefix sums of the values: a treap in an
//! arena. UWFQ needs "total slot-time of a user's jobs ordered at or before this one" after
//! arbitrary insertions in the middle, in O(log n); `BTreeMap` cannot sum a range that fast.

const NIL: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Node {
    key: f64,
    id: u64,
    value: f64,
    sum: f64,
    prio: u64,
    left: u32,
    right: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct SumTree {
    nodes: Vec<Node>,
    free: Vec<u32>,
    root: u32,
    len: usize,
    rng: u64,
}

impl Default for SumTree {
    fn default() -> Self {
        SumTree { nodes: Vec::new(), free: Vec::new(), root: NIL, len: 0, rng: 0x9E37_79B9_7F4A_7C15 }
    }
}

/// `(key, id)` order: keys by total order, ties by id, so equal keys stay distinct entries.
#[inline]
fn less(a: (f64, u64), b: (f64, u64)) -> bool {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).is_lt()
}

impl SumTree {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn sum_of(&self, n: u32) -> f64 {
        if n == NIL {
            0.0
        } else {
            self.nodes[n as usize].sum
        }
    }

    /// Recomputes a node's sum from its children, so sums never drift with updates.
    #[inline]
    fn pull(&mut self, n: u32) {
        let (l, r) = (self.nodes[n as usize].left, self.nodes[n as usize].right);
        let s = self.sum_of(l) + self.nodes[n as usize].value + self.sum_of(r);
        self.nodes[n as usize].sum = s;
    }

    fn next_prio(&mut self) -> u64 {
        // xorshift64*: the treap only needs priorities independent of the keys.
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Splits `n` into (< k, >= k).
    fn split(&mut self, n: u32, k: (f64, u64)) -> (u32, u32) {
        if n == NIL {
            return (NIL, NIL);
        }
        let nk = (self.nodes[n as usize].key, self.nodes[n as usize].id);
        if less(nk, k) {
            let (a, b) = self.split(self.nodes[n as usize].right, k);
            self.nodes[n as usize].right = a;
            self.pull(n);
            (n, b)
        } else {
            let (a, b) = self.split(self.nodes[n as usize].left, k);
            self.nodes[n as usize].left = b;
            self.pull(n);
            (a, n)
        }
    }

    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        if self.nodes[a as usize].prio > self.nodes[b as usize].prio {
            let r = self.merge(self.nodes[a as usize].right, b);
            self.nodes[a as usize].right = r;
            self.pull(a);
            a
        } else {
            let l = self.merge(a, self.nodes[b as usize].left);
            self.nodes[b as usize].left = l;
            self.pull(b);
            b
        }
    }

    /// Inserts an entry; the caller guarantees `(key, id)` is not present.
    pub fn insert(&mut self, key: f64, id: u64, value: f64) {
        let prio = self.next_prio();
        let node = Node { key, id, value, sum: value, prio, left: NIL, right: NIL };
        let idx = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        let (a, b) = self.split(self.root, (key, id));
        let left = self.merge(a, idx);
        self.root = self.merge(left, b);
        self.len += 1;
    }

    /// Removes `(key, id)` and returns its value.
    pub fn remove(&mut self, key: f64, id: u64) -> Option<f64> {
        let (a, b) = self.split(self.root, (key, id));
        // b's minimum is the entry if present; split it off by the next possible id.
        let (mid, c) = match id.checked_add(1) {
            Some(next) => self.split(b, (key, next)),
            None => self.split(b, (f64::from_bits(key.to_bits()).next_up_total(), 0)),
        };
        let found = if mid != NIL {
            let v = self.nodes[mid as usize].value;
            debug_assert!(self.nodes[mid as usize].left == NIL && self.nodes[mid as usize].right == NIL);
            self.free.push(mid);
            self.len -= 1;
            Some(v)
        } else {
            None
        };
        let rest = self.merge(a, c);
        self.root = rest;
        found
    }

    /// Sum of the values of entries ordered at or before `(key, id)`.
    pub fn prefix_sum(&self, key: f64, id: u64) -> f64 {
        let mut n = self.root;
        let mut acc = 0.0;
        while n != NIL {
            let node = &self.nodes[n as usize];
            if less((key, id), (node.key, node.id)) {
                n = node.left;
            } else {
                acc += self.sum_of(node.left) + node.value;
                n = node.right;
            }
        }
        acc
    }

    /// The smallest entry.
    pub fn first(&self) -> Option<(f64, u64, f64)> {
        let mut n = self.root;
        if n == NIL {
            return None;
        }
        while self.nodes[n as usize].left != NIL {
            n = self.nodes[n as usize].left;
        }
        let node = &self.nodes[n as usize];
        Some((node.key, node.id, node.value))
    }
}

/// The next float in the total order, for splitting just after the largest id of a key.
trait NextUpTotal {
    fn next_up_total(self) -> f64;
}

impl NextUpTotal for f64 {
    fn next_up_total(self) -> f64 {
        if self.is_nan() || self == f64::INFINITY {
            return self;
        }
        if self == 0.0 {
            return f64::from_bits(1);
        }
        let bits = self.to_bits();
        if self > 0.0 {
            f64::from_bits(bits + 1)
        } else {
            f64::from_bits(bits - 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_sums_follow_key_order_under_inserts_and_removes() {
        let mut t = SumTree::default();
        let mut model: Vec<(f64, u64, f64)> = Vec::new();
        let mut x = 7u64;
        for i in 0..2000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let key = ((x >> 33) % 50) as f64;
            if i % 3 == 2 && !model.is_empty() {
                let (k, id, v) = model.remove((x as usize >> 7) % model.len());
                assert_eq!(t.remove(k, id), Some(v));
            } else {
                let v = ((x >> 20) % 100) as f64;
                t.insert(key, i, v);
                model.push((key, i, v));
            }
            model.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            assert_eq!(t.len(), model.len());
            if let Some(&(k, id, _)) = model.get(model.len() / 2) {
                let want: f64 = model.iter().take_while(|e| !less((k, id), (e.0, e.1))).map(|e| e.2).sum();
                assert_eq!(t.prefix_sum(k, id), want);
            }
            assert_eq!(t.first().map(|f| (f.0, f.1)), model.first().map(|f| (f.0, f.1)));
        }
        assert_eq!(t.remove(1e9, 0), None);
    }
}
