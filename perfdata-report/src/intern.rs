//! Compact interning for what the exports count per distinct stack: keys numbered in
//! the order they are first seen, each kept once in chunks (growing never copies them,
//! so memory is the keys and no more than one chunk spare), found through a hash table
//! of 4-byte numbers.

use std::hash::{BuildHasher, Hash};

use hashbrown::hash_table::{Entry, HashTable};

/// Elements per chunk of a [`Chunked`].
const CHUNK: usize = 1 << 16;

/// A vector in fixed chunks: pushing never moves what is there.
#[derive(Debug, Clone)]
pub(crate) struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Chunked<T> {
    pub(crate) fn push(&mut self, value: T) {
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        self.chunks.last_mut().expect("a chunk").push(value);
        self.len += 1;
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn get(&self, i: usize) -> &T {
        &self.chunks[i / CHUNK][i % CHUNK]
    }

    pub(crate) fn get_mut(&mut self, i: usize) -> &mut T {
        &mut self.chunks[i / CHUNK][i % CHUNK]
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flatten()
    }

    /// The elements in order, each chunk freed once passed.
    pub(crate) fn into_iter(self) -> impl Iterator<Item = T> {
        self.chunks.into_iter().flatten()
    }
}

/// Distinct keys numbered from 0 in the order they were first interned.
#[derive(Debug, Clone)]
pub(crate) struct Interner<K> {
    keys: Chunked<K>,
    index: HashTable<u32>,
}

impl<K> Default for Interner<K> {
    fn default() -> Self {
        Interner {
            keys: Chunked::default(),
            index: HashTable::new(),
        }
    }
}

fn hash<K: Hash>(key: &K) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(key)
}

impl<K: Eq + Hash> Interner<K> {
    /// The number of `key`, and whether it is new.
    pub(crate) fn intern(&mut self, key: K) -> (u32, bool) {
        let keys = &self.keys;
        let entry = self.index.entry(
            hash(&key),
            |&i| *keys.get(i as usize) == key,
            |&i| hash(keys.get(i as usize)),
        );
        match entry {
            Entry::Occupied(e) => (*e.get(), false),
            Entry::Vacant(v) => {
                let id = u32::try_from(self.keys.len()).expect("fewer than 2^32 distinct keys");
                v.insert(id);
                self.keys.push(key);
                (id, true)
            }
        }
    }

    /// How many keys there are.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Key number `id`.
    pub(crate) fn get(&self, id: u32) -> &K {
        self.keys.get(id as usize)
    }

    /// The keys, numbered in order, without the index.
    pub(crate) fn into_keys(self) -> Chunked<K> {
        self.keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_numbered_in_first_seen_order() {
        let mut i = Interner::default();
        let n = 3 * CHUNK as u32 + 5;
        for k in 0..n {
            assert_eq!(i.intern((k % 1000, k / 1000)), (k, true));
        }
        for k in (0..n).rev() {
            assert_eq!(i.intern((k % 1000, k / 1000)), (k, false));
        }
        let keys = i.into_keys();
        assert_eq!(keys.len(), n as usize);
        assert_eq!(*keys.get(1234), (234, 1));
        assert_eq!(keys.iter().count(), n as usize);
        assert_eq!(
            *keys.get(CHUNK + 1),
            ((CHUNK as u32 + 1) % 1000, (CHUNK as u32 + 1) / 1000)
        );
    }
}
