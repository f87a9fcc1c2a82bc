//! `ptxvm ir --bytecode`: the disassembled bytecode of a module's kernels
//! ([`ptx_interp::disasm`]).

use ptx_diag::{render_to_stderr, ColorMode};
use std::io::Write;
use std::process::ExitCode;

/// Prints the bytecode of every kernel of the PTX file `path`, or of the kernel `only`.
pub(crate) fn bytecode(path: &str, only: Option<&str>, color: ColorMode) -> ExitCode {
    let (file, diags) = match crate::load(path) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    if !diags.is_empty() {
        render_to_stderr(&file, &diags, color);
        return ExitCode::from(1);
    }
    let module = match ptxvm::Module::from_ptx(&ptxvm::Device::new(), file.name(), file.text()) {
        Ok(m) => m,
        Err(e) => {
            e.render_to_stderr(color);
            return ExitCode::from(1);
        }
    };
    let kernels = match only {
        Some(name) => match crate::demangle::find_kernel(&module.kernel_names(), name, file.name())
        {
            Ok(k) => vec![k],
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        },
        None => module.kernel_names(),
    };
    let ir = module.ir();
    let mut out = String::new();
    for (k, name) in kernels.iter().enumerate() {
        let Some((index, _)) = ir.function(name) else {
            continue;
        };
        match ptx_interp::disasm::disassemble(ir, index, file.text()) {
            Ok(text) => {
                if k > 0 {
                    out.push('\n');
                }
                out.push_str(&text);
            }
            Err(e) => {
                eprintln!("error: kernel `{name}` cannot be compiled: {e}");
                return ExitCode::from(1);
            }
        }
    }
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(out.as_bytes())
        .and_then(|_| stdout.flush())
        .is_err()
    {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
