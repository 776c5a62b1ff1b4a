//! The first non-finite number in a value about to be saved, with where it is: JSON has no
//! NaN or infinity (serde_json writes `null`, which no `f64` reads back), so a checkpoint
//! holding one could never be resumed.
//!
//! A `serde` serializer that writes nothing and stops at the first `f32`/`f64` that is not
//! finite, naming its path (`engine.progressive.0`).

use serde::ser::{self, Serialize};
use std::fmt;

/// The path (fields and indices, dot-separated) of the first non-finite number in `value`,
/// with the number; `None` when every number is finite.
pub(super) fn first_non_finite<T: Serialize + ?Sized>(value: &T) -> Option<(String, f64)> {
    let mut walker = Walker { path: Vec::new() };
    match value.serialize(&mut walker) {
        Err(Found(path, Some(v))) => Some((path, v)),
        // A value that fails to serialize at all is reported by the real serializer.
        Ok(()) | Err(Found(_, None)) => None,
    }
}

/// The error that stops the walk: the path and the value found (none for an error of the
/// value's own `Serialize`).
#[derive(Debug)]
struct Found(String, Option<f64>);

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} at {}", self.1, self.0)
    }
}

impl std::error::Error for Found {}

impl ser::Error for Found {
    fn custom<M: fmt::Display>(msg: M) -> Self {
        Found(msg.to_string(), None)
    }
}

struct Walker {
    path: Vec<String>,
}

impl Walker {
    fn float(&self, v: f64) -> Result<(), Found> {
        if v.is_finite() {
            Ok(())
        } else {
            Err(Found(self.path.join("."), Some(v)))
        }
    }

    fn at<T: Serialize + ?Sized>(&mut self, key: String, value: &T) -> Result<(), Found> {
        self.path.push(key);
        value.serialize(&mut *self)?;
        self.path.pop();
        Ok(())
    }
}

/// A compound value: its elements are numbered.
struct Compound<'a> {
    walker: &'a mut Walker,
    index: usize,
}

impl Compound<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
        let key = self.index.to_string();
        self.index += 1;
        self.walker.at(key, value)
    }
}

macro_rules! ok {
    ($($name:ident: $t:ty),*) => {
        $(fn $name(self, _: $t) -> Result<(), Found> { Ok(()) })*
    };
}

impl<'a> ser::Serializer for &'a mut Walker {
    type Ok = ();
    type Error = Found;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    ok!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_char: char, serialize_str: &str, serialize_bytes: &[u8],
        serialize_unit_struct: &'static str);

    fn serialize_f32(self, v: f32) -> Result<(), Found> {
        self.float(v as f64)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Found> {
        self.float(v)
    }
    fn serialize_none(self) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Found> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Found> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Found> {
        self.at(variant.to_string(), value)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'a>, Found> {
        Ok(Compound {
            walker: self,
            index: 0,
        })
    }
    fn serialize_tuple(self, _: usize) -> Result<Compound<'a>, Found> {
        self.serialize_seq(None)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Found> {
        self.serialize_seq(None)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Found> {
        self.path.push(variant.to_string());
        self.serialize_seq(None)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'a>, Found> {
        self.serialize_seq(None)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Found> {
        self.serialize_seq(None)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Found> {
        self.path.push(variant.to_string());
        self.serialize_seq(None)
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
        self.element(value)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
        self.element(value)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
        self.element(value)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
        self.element(value)
    }
    fn end(self) -> Result<(), Found> {
        self.walker.path.pop();
        Ok(())
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, _: &T) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
        self.element(value)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Found> {
        self.walker.at(key.to_string(), value)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Found;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Found> {
        self.walker.at(key.to_string(), value)
    }
    fn end(self) -> Result<(), Found> {
        self.walker.path.pop();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct State {
        progressive: (f64, usize),
        best: Option<(f64, usize, Vec<f64>)>,
        groups: Vec<Vec<f32>>,
    }

    #[test]
    fn finds_the_first_non_finite_number_and_names_its_path() {
        let mut s = State {
            progressive: (1.5, 3),
            best: Some((2.0, 1, vec![0.0, -1e308])),
            groups: vec![vec![1.0], vec![2.0, 3.0]],
        };
        assert_eq!(first_non_finite(&s).map(|f| f.0), None);
        s.groups[1][1] = f32::INFINITY;
        assert_eq!(
            first_non_finite(&s),
            Some(("groups.1.1".to_string(), f64::INFINITY))
        );
        s.progressive.0 = f64::NAN;
        let (path, v) = first_non_finite(&s).unwrap();
        assert_eq!(path, "progressive.0");
        assert!(v.is_nan());
        s.progressive.0 = 0.0;
        s.groups[1][1] = 0.0;
        s.best.as_mut().unwrap().2[1] = f64::NEG_INFINITY;
        assert_eq!(
            first_non_finite(&s),
            Some(("best.2.1".to_string(), f64::NEG_INFINITY))
        );
    }

    /// `encode` refuses a non-finite number naming its field; `decode` of a state where
    /// one was written as `null` names the field instead of serde's bare type error.
    #[test]
    fn checkpoints_refuse_non_finite_numbers_and_name_the_field_of_a_null() {
        let s = State {
            progressive: (f64::NAN, 3),
            best: None,
            groups: Vec::new(),
        };
        let e = crate::checkpoint::encode(&s).unwrap_err().to_string();
        assert!(e.contains("NaN at progressive.0"), "{e}");
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Back {
            engine: (u64, (f64, usize)),
        }
        let bytes = br#"{"engine":[3,[null,12]]}"#;
        let e = crate::checkpoint::decode::<Back>("parser", bytes)
            .unwrap_err()
            .to_string();
        assert!(e.contains("null in field `engine`"), "{e}");
        let e = crate::checkpoint::decode::<Back>("parser", br#"{"engine":[3,[1,"x"]]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a state of the parser learner"), "{e}");
    }
}
