//! Evaluation of constant expressions (ISA "Constant Expressions" and "Integer Constant Expression
//! Evaluation").
//!
//! Integer constants are 64-bit and either signed (`.s64`) or unsigned (`.u64`). A literal is
//! signed unless it has a `U` suffix or does not fit in `.s64`. Unary `+`/`-` keep the operand's
//! type; `~` gives unsigned; `!`, comparisons, `&&` and `||` give signed 0/1. Other binary operators
//! apply the usual arithmetic conversions (unsigned if either side is); shifts keep the type of
//! the left operand. Floating-point constants are doubles and allow only `+ - * /`, comparisons,
//! unary `+ -` and `?:`; `0f` single-precision literals may not be used in expressions.
//!
//! Where the ISA promises fully defined behaviour we choose (and document): division or remainder
//! by zero is an error; a shift by 64 or more gives 0 (left, or unsigned right) or the sign fill
//! (signed right), as if shifting one bit at a time; signed overflow wraps (two's complement).

use crate::ast::{BinaryOp, Expr, ExprKind, UnaryOp};

/// The value of a constant expression.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A 64-bit integer and whether it is unsigned (`.u64`) or signed (`.s64`).
    Int {
        /// The bits.
        bits: u64,
        /// `.u64` if true, `.s64` otherwise.
        unsigned: bool,
    },
    /// A double-precision value.
    Float(f64),
    /// A `0f` single-precision literal (only valid on its own, not inside an expression).
    F32(u32),
}

impl Value {
    /// The value as a signed integer (for signed) or its bits (unsigned).
    pub fn as_i128(self) -> Option<i128> {
        match self {
            Value::Int {
                bits,
                unsigned: true,
            } => Some(bits as i128),
            Value::Int {
                bits,
                unsigned: false,
            } => Some(bits as i64 as i128),
            _ => None,
        }
    }
}

/// Why an expression has no constant value.
#[derive(Clone, Debug, PartialEq)]
pub enum EvalError {
    /// A name that is not a known constant (registers, variables, labels).
    NotConstant(Expr),
    /// Integer division or remainder by zero.
    DivisionByZero(Expr),
    /// An operator not allowed on floating-point constants (or on `0f` literals).
    FloatOperator(Expr),
}

fn int(bits: u64, unsigned: bool) -> Value {
    Value::Int { bits, unsigned }
}

fn truth(b: bool) -> Value {
    int(b as u64, false)
}

/// Evaluates `e`. `lookup` resolves names (e.g. `WARP_SZ`); return `None` for non-constants.
pub fn eval(e: &Expr, lookup: &dyn Fn(&str) -> Option<Value>) -> Result<Value, EvalError> {
    Ok(match &e.kind {
        ExprKind::Int {
            value,
            unsigned_suffix,
            ..
        } => int(*value, *unsigned_suffix || *value > i64::MAX as u64),
        ExprKind::F32Bits(b) => Value::F32(*b),
        ExprKind::F64Bits(b) => Value::Float(f64::from_bits(*b)),
        ExprKind::Float(t) => Value::Float(ExprKind::float_value(t)),
        ExprKind::Symbol(name) => match name.as_str() {
            "WARP_SZ" => int(32, false),
            n => lookup(n).ok_or_else(|| EvalError::NotConstant(e.clone()))?,
        },
        ExprKind::Unary(op, a) => {
            unary(*op, eval(a, lookup)?).ok_or_else(|| EvalError::FloatOperator(e.clone()))?
        }
        ExprKind::Binary(op, a, b) => {
            let x = eval(a, lookup)?;
            let y = eval(b, lookup)?;
            binary(*op, x, y).ok_or_else(|| match (x, y) {
                (Value::Int { .. }, Value::Int { .. }) => EvalError::DivisionByZero(e.clone()),
                _ => EvalError::FloatOperator(e.clone()),
            })?
        }
        ExprKind::Conditional(c, a, b) => {
            let c = eval(c, lookup)?;
            let Value::Int { .. } = c else {
                return Err(EvalError::FloatOperator(e.clone()));
            };
            let x = eval(a, lookup)?;
            let y = eval(b, lookup)?;
            conditional(c, x, y).ok_or_else(|| EvalError::FloatOperator(e.clone()))?
        }
        ExprKind::Cast(ty, a) => {
            cast(ty, eval(a, lookup)?).ok_or_else(|| EvalError::FloatOperator(e.clone()))?
        }
        ExprKind::Sink
        | ExprKind::Index(..)
        | ExprKind::Select(..)
        | ExprKind::Generic(_)
        | ExprKind::Mask(..) => return Err(EvalError::NotConstant(e.clone())),
    })
}

fn unary(op: UnaryOp, v: Value) -> Option<Value> {
    Some(match (op, v) {
        (UnaryOp::Plus, Value::Int { .. } | Value::Float(_)) => v,
        (UnaryOp::Neg, Value::Int { bits, unsigned }) => int(bits.wrapping_neg(), unsigned),
        (UnaryOp::Neg, Value::Float(f)) => Value::Float(-f),
        (UnaryOp::BitNot, Value::Int { bits, .. }) => int(!bits, true),
        (UnaryOp::Not, Value::Int { bits, .. }) => truth(bits == 0),
        _ => return None,
    })
}

fn conditional(c: Value, x: Value, y: Value) -> Option<Value> {
    let Value::Int { bits, .. } = c else {
        return None;
    };
    let pick = if bits != 0 { x } else { y };
    match (x, y, pick) {
        (
            Value::Int { unsigned: u1, .. },
            Value::Int { unsigned: u2, .. },
            Value::Int { bits, .. },
        ) => Some(int(bits, u1 || u2)),
        (Value::Float(_), Value::Float(_), _) => Some(pick),
        _ => None,
    }
}

fn cast(ty: &str, v: Value) -> Option<Value> {
    match (ty, v) {
        (".s64", Value::Int { bits, .. }) => Some(int(bits, false)),
        (".u64", Value::Int { bits, .. }) => Some(int(bits, true)),
        _ => None,
    }
}

/// The first integer division or remainder by a constant zero in `e` (innermost first), also
/// inside an expression that is not constant as a whole (`[%rd1+4/0]`): ptxas rejects such an
/// expression wherever it appears. One pass over the tree.
pub fn division_by_zero(e: &Expr) -> Option<&Expr> {
    fn go<'e>(e: &'e Expr, found: &mut Option<&'e Expr>) -> Option<Value> {
        match &e.kind {
            ExprKind::Unary(op, a) => unary(*op, go(a, found)?),
            ExprKind::Binary(op, a, b) => {
                let x = go(a, found);
                let y = go(b, found);
                if matches!(op, BinaryOp::Div | BinaryOp::Rem)
                    && matches!(y, Some(Value::Int { bits: 0, .. }))
                    && found.is_none()
                {
                    *found = Some(e);
                }
                binary(*op, x?, y?)
            }
            ExprKind::Conditional(c, a, b) => {
                let c = go(c, found);
                let x = go(a, found);
                let y = go(b, found);
                conditional(c?, x?, y?)
            }
            ExprKind::Cast(ty, a) => cast(ty, go(a, found)?),
            ExprKind::Index(a, b) => {
                go(a, found);
                go(b, found);
                None
            }
            ExprKind::Select(a, _) | ExprKind::Generic(a) | ExprKind::Mask(_, a) => {
                go(a, found);
                None
            }
            // names are no constants here (`WARP_SZ` aside): no `eval`, whose error clones `e`
            ExprKind::Symbol(n) => (n.as_str() == "WARP_SZ").then(|| int(32, false)),
            ExprKind::Sink => None,
            _ => eval(e, &|_| None).ok(),
        }
    }
    let mut found = None;
    go(e, &mut found);
    found
}

fn binary(op: BinaryOp, x: Value, y: Value) -> Option<Value> {
    use BinaryOp::*;
    match (x, y) {
        (
            Value::Int {
                bits: a,
                unsigned: ua,
            },
            Value::Int {
                bits: b,
                unsigned: ub,
            },
        ) => {
            let u = ua || ub;
            Some(match op {
                Add => int(a.wrapping_add(b), u),
                Sub => int(a.wrapping_sub(b), u),
                Mul => int(a.wrapping_mul(b), u),
                Div | Rem if b == 0 => return None,
                Div if u => int(a / b, true),
                Div => int((a as i64).wrapping_div(b as i64) as u64, false),
                Rem if u => int(a % b, true),
                Rem => int((a as i64).wrapping_rem(b as i64) as u64, false),
                Shl => int(if b >= 64 { 0 } else { a << b }, ua),
                Shr if ua => int(if b >= 64 { 0 } else { a >> b }, true),
                Shr => int(((a as i64) >> b.min(63)) as u64, false),
                BitAnd => int(a & b, u),
                BitOr => int(a | b, u),
                BitXor => int(a ^ b, u),
                And => truth(a != 0 && b != 0),
                Or => truth(a != 0 || b != 0),
                Lt | Gt | Le | Ge | Eq | Ne => {
                    let ord = if u {
                        a.cmp(&b)
                    } else {
                        (a as i64).cmp(&(b as i64))
                    };
                    truth(match op {
                        Lt => ord.is_lt(),
                        Gt => ord.is_gt(),
                        Le => ord.is_le(),
                        Ge => ord.is_ge(),
                        Eq => ord.is_eq(),
                        _ => ord.is_ne(),
                    })
                }
            })
        }
        // Mixed int/float operands fall to `_`: the ISA allows no conversion between them.
        (Value::Float(a), Value::Float(b)) => Some(match op {
            Add => Value::Float(a + b),
            Sub => Value::Float(a - b),
            Mul => Value::Float(a * b),
            Div => Value::Float(a / b),
            Lt => truth(a < b),
            Gt => truth(a > b),
            Le => truth(a <= b),
            Ge => truth(a >= b),
            Eq => truth(a == b),
            Ne => truth(a != b),
            _ => return None,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    /// Evaluates the initializer of `x` in `.global .u64 x = EXPR;`.
    fn ev(src: &str) -> Result<Value, EvalError> {
        let text =
            format!(".version 8.0\n.target sm_80\n.address_size 64\n.global .u64 x = {src};\n");
        let p = parse(&text);
        assert!(p.diagnostics.is_empty(), "{src}: {:?}", p.diagnostics);
        let crate::ast::Directive::Variable(v) = &p.module.directives[3] else {
            panic!()
        };
        let Some(crate::ast::Initializer::Expr(e)) = &v.declarators[0].init else {
            panic!()
        };
        eval(e, &|_| None)
    }

    fn s(v: i64) -> Value {
        int(v as u64, false)
    }
    fn u(v: u64) -> Value {
        int(v, true)
    }

    #[test]
    fn literal_types() {
        // Examples from the ISA text.
        assert_eq!(ev("42"), Ok(s(42)));
        assert_eq!(ev("0x1234"), Ok(s(0x1234)));
        assert_eq!(ev("0123"), Ok(s(0o123)));
        assert_eq!(ev("0xfabc123400000000"), Ok(u(0xfabc123400000000)));
        assert_eq!(ev("42U"), Ok(u(42)));
        assert_eq!(ev("0x1234U"), Ok(u(0x1234)));
    }

    #[test]
    fn unary_rules() {
        assert_eq!(ev("+123"), Ok(s(123)));
        assert_eq!(ev("-1"), Ok(s(-1)));
        assert_eq!(ev("-(-42)"), Ok(s(42)));
        assert_eq!(ev("-1U"), Ok(u(u64::MAX)));
        assert_eq!(
            ev("-0xfabc123400000000"),
            Ok(u(0xfabc123400000000u64.wrapping_neg()))
        );
        assert_eq!(ev("~0"), Ok(u(u64::MAX)));
        assert_eq!(ev("!5"), Ok(s(0)));
        assert_eq!(ev("!0"), Ok(s(1)));
    }

    #[test]
    fn binary_rules() {
        assert_eq!(ev("8*12"), Ok(s(96)));
        assert_eq!(ev("-7/2"), Ok(s(-3)));
        assert_eq!(ev("-7 % 2"), Ok(s(-1)));
        // usual arithmetic conversions: -7 becomes 2^64-7 when the other side is unsigned
        assert_eq!(ev("-7/2U"), Ok(u((u64::MAX - 6) / 2)));
        assert_eq!(ev("-1<0"), Ok(s(1)));
        assert_eq!(ev("-1<0U"), Ok(s(0)));
        assert_eq!(ev("1<<63"), Ok(s(i64::MIN)));
        assert_eq!(ev("-16>>2"), Ok(s(-4)));
        assert_eq!(ev("(.u64)-16>>2"), Ok(u((u64::MAX - 15) >> 2)));
        assert_eq!(ev("1<<64"), Ok(s(0)));
        assert_eq!(ev("-1>>100"), Ok(s(-1)));
        assert_eq!(ev("6&3|8^1"), Ok(s((6 & 3) | (8 ^ 1))));
        assert_eq!(ev("1&&0||1"), Ok(s(1)));
        assert_eq!(ev("2+3*4-1"), Ok(s(13)));
        assert_eq!(ev("1?2:3U"), Ok(u(2)));
        assert_eq!(ev("0?2:3"), Ok(s(3)));
        assert_eq!(ev("(.s64)0xffffffffffffffff"), Ok(s(-1)));
        assert_eq!(ev("WARP_SZ*2"), Ok(s(64)));
    }

    #[test]
    fn floats() {
        assert_eq!(ev("1.5*2.0"), Ok(Value::Float(3.0)));
        assert_eq!(ev("0d3FF0000000000000+1.0"), Ok(Value::Float(2.0)));
        assert_eq!(ev("1.5<2.0"), Ok(s(1)));
        assert!(matches!(ev("1.5 % 2.0"), Err(EvalError::FloatOperator(_))));
        assert!(matches!(ev("1.5+1"), Err(EvalError::FloatOperator(_))));
        assert!(matches!(
            ev("0f3F800000+1.0"),
            Err(EvalError::FloatOperator(_))
        ));
    }

    #[test]
    fn errors() {
        assert!(matches!(ev("1/0"), Err(EvalError::DivisionByZero(_))));
        assert!(matches!(ev("5 % (2-2)"), Err(EvalError::DivisionByZero(_))));
    }

    #[test]
    fn division_by_zero_anywhere() {
        let find = |s: &str| {
            let src = format!(".version 8.0\n.target sm_90\n.global .u32 g = {s};\n");
            let p = crate::parse(&src);
            let crate::ast::Directive::Variable(v) = &p.module.directives[2] else {
                panic!("{s}");
            };
            let Some(crate::ast::Initializer::Expr(e)) = &v.declarators[0].init else {
                panic!("{s}");
            };
            division_by_zero(e)
                .map(|d| src[d.loc.0.start as usize..d.loc.0.end as usize].to_string())
        };
        assert_eq!(find("7 % 0").as_deref(), Some("7 % 0"));
        assert!(find("7 % (2-2)").is_some());
        assert_eq!(find("g + 1 + 4/0").as_deref(), Some("4/0"));
        assert_eq!(find("(1 ? 3 : 2/0) * 2").as_deref(), Some("2/0"));
        assert_eq!(find("4/2 + 1.0/0.0"), None);
        assert_eq!(find("4/(g-g)"), None);
        assert!(matches!(ev("foo+1"), Err(EvalError::NotConstant(_))));
    }
}
