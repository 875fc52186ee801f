//! What a run reports: flow, query and port records, the samples taken over time (the
//! timeseries, queues, flows' throughput), ping RTTs and the run's counters, and the
//! metrics they are built on (the ideal FCT). Each table's schema (column names, types,
//! what means "none", documentation) is defined here once, with the columns
//! themselves ([`records!`]); the Python binding and `spillway run` build their columns
//! from it, and docs/outputs.md's column tables are generated from it
//! (python/spillway/reference.py, `make reference`; a test keeps them current).

pub mod counters;
pub mod flow_throughput;
pub mod flows;
pub mod histogram;
pub mod hpcc;
pub mod ideal;
pub mod pings;
pub mod ports;
pub mod queries;
pub mod queues;
pub mod timeseries;

/// How a column says "none".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Null {
    /// Every value is a value.
    Never,
    /// The type's largest value (an unfinished flow's finish time, no query).
    Max,
    /// NaN (an unfinished flow's slowdown).
    Nan,
}

/// One column of a table.
#[derive(Debug, Clone, Copy)]
pub struct ColumnDef {
    pub name: &'static str,
    /// `u64`, `u32`, `u8`, `f64` or `bool`.
    pub ty: &'static str,
    pub null: Null,
    /// For a column of small codes: the label of each code (a dictionary column).
    pub labels: Option<&'static [&'static str]>,
    pub doc: &'static str,
}

/// A column's values, borrowed.
pub enum ColumnRef<'a> {
    U64(&'a [u64]),
    U32(&'a [u32]),
    U8(&'a [u8]),
    F64(&'a [f64]),
    Bool(&'a [bool]),
}

/// A type a column can hold.
pub trait ColumnType: Sized {
    const NAME: &'static str;
    fn column(v: &[Self]) -> ColumnRef<'_>;
}

macro_rules! column_type {
    ($t:ty, $name:literal, $var:ident) => {
        impl ColumnType for $t {
            const NAME: &'static str = $name;
            fn column(v: &[$t]) -> ColumnRef<'_> {
                ColumnRef::$var(v)
            }
        }
    };
}
column_type!(u64, "u64", U64);
column_type!(u32, "u32", U32);
column_type!(u8, "u8", U8);
column_type!(f64, "f64", F64);
column_type!(bool, "bool", Bool);

/// Defines a table of records as columns (`Vec` per field) with its schema: each field
/// `/// doc` `name: type`, optionally `[null = Max | Nan]` and `[labels = LIST]`.
macro_rules! records {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                #[doc = $doc:literal]
                $(#[doc = $more:literal])*
                $field:ident : $ty:ty
                    $(, null = $null:ident)?
                    $(, labels = $labels:path)?
            ;)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default)]
        pub struct $name {
            $(
                #[doc = $doc]
                $(#[doc = $more])*
                pub $field: Vec<$ty>,
            )*
        }

        impl $name {
            /// Every column: name, type, what means "none", documentation.
            pub const SCHEMA: &'static [$crate::output::ColumnDef] = &[
                $($crate::output::ColumnDef {
                    name: stringify!($field),
                    ty: <$ty as $crate::output::ColumnType>::NAME,
                    null: $crate::output::records!(@null $($null)?),
                    labels: $crate::output::records!(@labels $($labels)?),
                    doc: concat!($doc $(, " ", $more)*),
                },)*
            ];

            /// Every column's values, in schema order.
            pub fn columns(&self) -> Vec<(&'static str, $crate::output::ColumnRef<'_>)> {
                vec![$((stringify!($field), <$ty as $crate::output::ColumnType>::column(&self.$field)),)*]
            }

            /// Appends row `i` of `o`.
            pub fn push_row(&mut self, o: &Self, i: usize) {
                $(self.$field.push(o.$field[i]);)*
            }

            /// Rows held.
            pub fn len(&self) -> usize {
                self.columns().first().map_or(0, |(_, c)| match c {
                    $crate::output::ColumnRef::U64(v) => v.len(),
                    $crate::output::ColumnRef::U32(v) => v.len(),
                    $crate::output::ColumnRef::U8(v) => v.len(),
                    $crate::output::ColumnRef::F64(v) => v.len(),
                    $crate::output::ColumnRef::Bool(v) => v.len(),
                })
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
        }
    };
    (@null) => { $crate::output::Null::Never };
    (@null $n:ident) => { $crate::output::Null::$n };
    (@labels) => { None };
    (@labels $l:path) => { Some($l) };
}
pub(crate) use records;
