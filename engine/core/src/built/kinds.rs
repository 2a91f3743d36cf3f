//! The kinds of a built node, written by the build script and read by `built`: one list, so the
//! two can never disagree.

/// A string: its place in the strings.
pub(crate) const STR: u32 = 0;
/// An integer: its bits.
pub(crate) const INT: u32 = 1;
/// A float: its bits.
pub(crate) const FLOAT: u32 = 2;
/// A boolean.
pub(crate) const BOOL: u32 = 3;
/// An array: the range of its items.
pub(crate) const ARRAY: u32 = 4;
/// A table: the range of its keys and values.
pub(crate) const TABLE: u32 = 5;
