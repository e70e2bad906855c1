//! Small helpers for the C strings and byte buffers inside perf.data.

/// The bytes of a NUL-terminated (and possibly NUL-padded) C string, up to the first NUL.
pub fn c_str_bytes(bytes: &[u8]) -> &[u8] {
    match bytes.iter().position(|&b| b == 0) {
        Some(n) => &bytes[..n],
        None => bytes,
    }
}

/// A C string field rendered as text (invalid UTF-8 replaced, as perf prints bytes).
pub fn c_str_lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(c_str_bytes(bytes)).into_owned()
}

/// The text side of a type holding a NUL-terminated, padded C string in its `bytes`
/// (perf's header strings and the kernel's file names and comms): `as_str_lossy`,
/// `Display` and a `Serialize` as that text. The layouts differ (a length prefix, or
/// the rest of a record); the text is the same.
macro_rules! c_string_text {
    ($t:ty) => {
        impl $t {
            /// The text before the first NUL.
            pub fn as_str_lossy(&self) -> String {
                $crate::text::c_str_lossy(&self.bytes)
            }
        }

        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.as_str_lossy())
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.as_str_lossy())
            }
        }
    };
}
pub(crate) use c_string_text;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_string_stops_at_first_nul() {
        assert_eq!(c_str_lossy(b"perf\0\0junk"), "perf");
        assert_eq!(c_str_lossy(b"nonul"), "nonul");
    }
}
