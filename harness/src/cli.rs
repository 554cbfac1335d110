//! Command-line interface: `mcperr reference`, `mcperr run`, `mcperr list`.
//!
//! Exit codes (DESIGN.md §5): 0 all pass, 1 a failure, 2 a usage or setup error.

use std::io::{self, BufReader};

use clap::{Args, Parser, Subcommand};
use mcperr_reference::{stdio, Fault, Handler};

/// Exit code for usage and setup errors.
pub const EXIT_USAGE: i32 = 2;

/// mcperr: conformance harness and fuzzer for the error behaviour of MCP servers.
#[derive(Debug, Parser)]
#[command(name = "mcperr", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the reference server (the executable error model) over stdio.
    ///
    /// It implements every rule of the MCP error model and the Bookshop fixture
    /// in both protocol eras. `--fault NAME` makes it break exactly one rule, so
    /// that a harness can prove it catches that deviation.
    Reference(ReferenceArgs),
}

#[derive(Debug, Args)]
struct ReferenceArgs {
    /// Inject one named deviation from the error model (see --list-faults).
    #[arg(long, value_name = "NAME")]
    fault: Option<Fault>,
    /// Print every fault with the rule it breaks, then exit.
    #[arg(long)]
    list_faults: bool,
}

/// Runs the CLI and returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match cli.command {
        Command::Reference(args) => reference(args),
    }
}

fn reference(args: ReferenceArgs) -> i32 {
    if args.list_faults {
        for f in Fault::ALL {
            println!("{:<28} {:<4} {}", f.name(), f.rule(), f.description());
        }
        return 0;
    }
    let handler = Handler::new(args.fault);
    let stdin = io::stdin();
    match stdio::serve(
        &handler,
        BufReader::new(stdin.lock()),
        io::stdout().lock(),
        io::stderr().lock(),
    ) {
        Ok(stdio::Stop::Eof) => 0,
        Ok(stdio::Stop::FaultExit) => 1,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("mcperr reference: i/o error: {e}");
            1
        }
    }
}
