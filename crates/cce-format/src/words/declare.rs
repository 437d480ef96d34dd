//! [`word!`]: a word declared once — its layout table, its typed struct, and the code that
//! moves between them — for the words whose struct holds one Rust field per declared field.
//!
//! ```text
//! word! {
//!     /// The struct's docs.
//!     #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
//!     pub struct FmaMetaCtrl: meta_ctrl;        // or `descriptor`
//!     /// The layout's docs.
//!     pub const FMA_META_CTRL = {
//!         name: "fma-meta-ctrl",                // the CLI's and the JSON's name
//!         fixed: [0x0210_0000, 0, 0, 0],         // bits every encoding sets
//!         fixed_tag: High,
//!         source: "…",
//!     };
//!     fields {                                  // table order = `cce decode` order
//!         sub: U3 = MC_SUB,                     // Rust field: type = its FieldDef
//!         …
//!     }
//! }
//! ```
//!
//! It generates the `Layout` const, the struct, its [`Declared`](super::Declared) and
//! [`FromInput`](super::FromInput) impls, and its `MetaCtrl` or `Descriptor` impl, whose `emit`
//! is the fixed bits ORed with every field placed through its declaration (then the word's
//! [`Rules::emit_rule`](super::Rules::emit_rule)), and whose `parse` refuses anything that is not
//! an exact encoding (then the word's [`Rules::parse_rule`](super::Rules::parse_rule)).

macro_rules! word {
    (
        $(#[$sattr:meta])*
        pub struct $Name:ident: $kind:ident;
        $(#[$lattr:meta])*
        pub const $LAYOUT:ident = {
            name: $cli:literal,
            fixed: $fixed:expr,
            fixed_tag: $tag:ident,
            source: $source:literal $(,)?
        };
        fields { $( $(#[$fattr:meta])* $field:ident : $Ty:ty = $DEF:ident ),+ $(,)? }
    ) => {
        $(#[$lattr])*
        pub const $LAYOUT: $crate::layout::Layout = $crate::layout::Layout {
            name: $cli,
            words: $crate::words::word!(@words $kind),
            fixed: $fixed,
            fixed_tag: $crate::tag::Tag::$tag,
            fields: &[$($DEF),+],
            source: $source,
        };

        $(#[$sattr])*
        pub struct $Name {
            $( $(#[$fattr])* pub $field: $Ty, )+
        }

        impl $crate::words::Declared for $Name {
            const LAYOUT: &'static $crate::layout::Layout = &$LAYOUT;
            #[inline]
            fn fields_to_words(&self) -> [u32; 4] {
                let mut w = $LAYOUT.fixed;
                $( w[$DEF.word as usize] |= $DEF.place($crate::words::FieldType::to_bits(self.$field, &$DEF)); )+
                w
            }
            #[inline]
            fn fields_from_words(w: &[u32; 4]) -> Self {
                $Name { $( $field: <$Ty as $crate::words::FieldType>::from_bits($DEF.get(w)), )+ }
            }
        }

        impl $crate::words::FromInput for $Name {
            fn from_input(
                values: &dyn $crate::words::FieldSource,
            ) -> Result<Self, $crate::error::FormatError> {
                Ok($Name {
                    $( $field: <$Ty as $crate::words::FieldType>::from_input(&$DEF, values.value($DEF.name))?, )+
                })
            }
        }

        $crate::words::word!(@trait $kind $Name);
    };
    (@words meta_ctrl) => { 1 };
    (@words descriptor) => { 4 };
    (@trait meta_ctrl $Name:ident) => {
        impl $crate::meta_ctrl::MetaCtrl for $Name {
            const LAYOUT: &'static $crate::layout::Layout = <Self as $crate::words::Declared>::LAYOUT;
            #[inline]
            fn emit(&self) -> u32 {
                $crate::words::emit(self)[0]
            }
            #[inline]
            fn parse(word: u32) -> Result<Self, $crate::error::FormatError> {
                $crate::words::parse([word, 0, 0, 0])
            }
        }
    };
    (@trait descriptor $Name:ident) => {
        impl $crate::descriptor::Descriptor for $Name {
            const LAYOUT: &'static $crate::layout::Layout = <Self as $crate::words::Declared>::LAYOUT;
            #[inline]
            fn emit(&self) -> [u32; 4] {
                $crate::words::emit(self)
            }
            #[inline]
            fn parse(words: [u32; 4]) -> Result<Self, $crate::error::FormatError> {
                $crate::words::parse(words)
            }
        }
    };
}

pub(crate) use word;
