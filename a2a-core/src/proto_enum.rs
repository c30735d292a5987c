//! A macro for ProtoJSON enums: emitted as their full proto name, read from the name or the
//! number, and unknown values kept (forward compatibility) rather than rejected.

macro_rules! proto_enum {
    (
        $(#[$doc:meta])*
        pub enum $name:ident {
            $( $(#[$vdoc:meta])* $variant:ident = ($num:expr, $wire:expr), )+
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vdoc])* $variant, )+
            /// A value this version of the library does not know (kept as it was received,
            /// so that it can be passed on unchanged).
            Unknown(String),
        }

        impl $name {
            /// Every known value, in proto number order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The proto name as it appears on the wire (e.g. `TASK_STATE_WORKING`).
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $wire, )+
                    $name::Unknown(s) => s,
                }
            }

            /// The proto enum number, if the value is known.
            pub fn number(&self) -> Option<i32> {
                match self {
                    $( $name::$variant => Some($num), )+
                    $name::Unknown(_) => None,
                }
            }

            /// Reads a value from its proto name or its number written as a string.
            /// Unrecognized names become [`Self::Unknown`]; use [`Self::is_known`] to check.
            pub fn from_wire(s: &str) -> Self {
                match s {
                    $( $wire => $name::$variant, )+
                    "" => Self::from_number(0),
                    other => match other.parse::<i64>() {
                        Ok(n) => Self::from_number(n),
                        Err(_) => $name::Unknown(other.to_owned()),
                    },
                }
            }

            /// Reads a value from its proto number.
            pub fn from_number(n: i64) -> Self {
                $( if n == $num { return $name::$variant; } )+
                $name::Unknown(n.to_string())
            }

            /// Whether this is one of the values this library knows.
            pub fn is_known(&self) -> bool {
                !matches!(self, $name::Unknown(_))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::convert::Infallible;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Ok(Self::from_wire(s))
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                // ProtoJSON writes an unknown enum number as a number; pass it on as received.
                if let $name::Unknown(v) = self {
                    if let Ok(n) = v.parse::<i64>() {
                        if n.to_string() == *v {
                            return s.serialize_i64(n);
                        }
                    }
                }
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("a ", stringify!($name), " name or number"))
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        Ok($name::from_wire(v))
                    }
                    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<$name, E> {
                        Ok($name::from_number(v))
                    }
                    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<$name, E> {
                        Ok(i64::try_from(v).map($name::from_number).unwrap_or_else(|_| $name::Unknown(v.to_string())))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

pub(crate) use proto_enum;
