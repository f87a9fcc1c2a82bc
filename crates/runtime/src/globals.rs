//! Host access to a module's variables: `.global` (CUDA `__device__`) and `.const` (CUDA
//! `__constant__`), like `cuModuleGetGlobal` followed by a copy. A variable is read or written
//! by name, whole or from a byte offset, before or between launches; kernels see what the host
//! wrote at their next launch.

use ptx_isa::{ScalarType, StateSpace};

use crate::{Element, Error, Module};

/// A module variable with storage, as [`Module::globals`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalInfo {
    /// Its name in the PTX.
    pub name: String,
    /// `.const` (`__constant__`; kernels cannot store to it) rather than `.global`.
    pub constant: bool,
    /// Element type when it is a fundamental type (`.f32 coeffs[3]`: `.f32`).
    pub ty: Option<ScalarType>,
    /// Size in bytes.
    pub size: u64,
    /// Alignment in bytes.
    pub align: u64,
    /// Its device address.
    pub addr: u64,
}

impl GlobalInfo {
    /// The declaration as PTX writes it, without initializer: `.const .f32 coeffs[3]`,
    /// `.global .u32 counter`, `.global .b8 blob[24]`.
    pub fn declaration(&self) -> String {
        let space = if self.constant { ".const" } else { ".global" };
        match self.ty {
            Some(t) => {
                let w = (t.size_bits() as u64 / 8).max(1);
                if self.size == w {
                    format!("{space} {} {}", t.suffix(), self.name)
                } else {
                    format!("{space} {} {}[{}]", t.suffix(), self.name, self.size / w)
                }
            }
            None => format!("{space} .b8 {}[{}]", self.name, self.size),
        }
    }
}

impl Module {
    /// The module's `.global` and `.const` variables that have storage, in declaration order
    /// (an `.extern` declaration without a definition has none).
    pub fn globals(&self) -> Vec<GlobalInfo> {
        self.ir
            .globals
            .iter()
            .enumerate()
            .filter(|(_, g)| matches!(g.space, StateSpace::Global | StateSpace::Const))
            .filter_map(|(i, g)| {
                let addr = *self.globals.addr.get(i)?;
                (addr != 0).then(|| GlobalInfo {
                    name: g.name.to_string(),
                    constant: g.space == StateSpace::Const,
                    ty: g.ty,
                    size: g.size,
                    align: g.align,
                    addr,
                })
            })
            .collect()
    }

    /// The variable `name`, or an [`Error::Usage`] that lists the module's variables.
    pub fn global_info(&self, name: &str) -> Result<GlobalInfo, Error> {
        let all = self.globals();
        if let Some(g) = all.iter().find(|g| g.name == name) {
            return Ok(g.clone());
        }
        let names: Vec<&str> = all.iter().map(|g| g.name.as_str()).collect();
        Err(Error::Usage(format!(
            "no .global or .const variable named `{name}` in {}; it has: {}",
            self.file.name(),
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        )))
    }

    /// The current bytes of variable `name` (its initializer until something writes it).
    pub fn read_global_bytes(&self, name: &str) -> Result<Vec<u8>, Error> {
        let g = self.global_info(name)?;
        let a = self.storage(&g)?;
        Ok(a.read_bytes(g.addr - a.base, g.size))
    }

    /// Writes `data` into variable `name` from byte `offset` (like `cuMemcpyHtoD` to the address
    /// `cuModuleGetGlobal` gives); `offset + data.len()` must not pass the variable's end.
    /// `.const` variables are writable from the host.
    pub fn write_global_bytes(&self, name: &str, offset: u64, data: &[u8]) -> Result<(), Error> {
        let g = self.global_info(name)?;
        if offset
            .checked_add(data.len() as u64)
            .is_none_or(|end| end > g.size)
        {
            return Err(Error::Usage(format!(
                "write of {} bytes at offset {offset} into `{name}` ({}), which is {} bytes",
                data.len(),
                g.declaration(),
                g.size
            )));
        }
        let a = self.storage(&g)?;
        a.write_bytes(g.addr - a.base + offset, data);
        Ok(())
    }

    /// Variable `name` read as elements of `T`: its size must be a multiple of `T`'s.
    pub fn read_global<T: Element>(&self, name: &str) -> Result<Vec<T>, Error> {
        let g = self.global_info(name)?;
        if g.size % T::SIZE as u64 != 0 {
            return Err(Error::Usage(format!(
                "`{name}` ({}) is {} bytes, not a whole number of {} elements",
                g.declaration(),
                g.size,
                T::NAME
            )));
        }
        let bytes = self.read_global_bytes(name)?;
        Ok(bytes.chunks_exact(T::SIZE).map(T::read_le).collect())
    }

    /// Writes `data` as variable `name`'s whole contents: its size in bytes must equal the
    /// variable's (use [`Module::write_global_bytes`] for a part).
    pub fn write_global<T: Element>(&self, name: &str, data: &[T]) -> Result<(), Error> {
        let g = self.global_info(name)?;
        let n = data.len() as u64 * T::SIZE as u64;
        if n != g.size {
            return Err(Error::Usage(format!(
                "{} {} elements are {n} bytes, `{name}` ({}) is {} bytes",
                data.len(),
                T::NAME,
                g.declaration(),
                g.size
            )));
        }
        let mut bytes = Vec::with_capacity(n as usize);
        for x in data {
            x.write_le(&mut bytes);
        }
        self.write_global_bytes(name, 0, &bytes)
    }

    fn storage(
        &self,
        g: &GlobalInfo,
    ) -> Result<std::sync::Arc<ptx_interp::mem::Allocation>, Error> {
        self.device
            .mem
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .find(g.addr, g.size.max(1))
            .cloned()
            .ok_or_else(|| {
                Error::Usage(format!(
                    "internal error: the storage of `{}` is not allocated",
                    g.name
                ))
            })
    }
}
