//! The gathered catalogue: the order of declarations, unique names, `only`.

use super::*;

#[test]
fn a_fault_declared_beside_its_behaviour_comes_after_the_catalogue() {
    // tools.rs declares list-shrinks-after-failure where it hides a tool.
    let declared = "list-shrinks-after-failure".parse::<Fault>().unwrap();
    assert_eq!(Fault::ALL.last(), Some(&declared));
    assert_eq!(Fault::ALL.first(), Some(&Fault::ToolErrorStructured));
    assert_eq!(declared.rule(), RuleId::T10);
    assert!(!declared.stdio_only() && !declared.http_only() && !declared.fuzz_only());
}

mod declared {
    use super::super::{Edge, RuleId};
    faults! {
        Everywhere => "everywhere", T1, "shows everywhere";
        OverStdio => "over-stdio", T2, "shows over stdio", only stdio;
    }

    #[test]
    fn only_names_where_a_declared_fault_shows() {
        assert_eq!(Fault::Everywhere.declared_only(), None);
        assert_eq!(Fault::OverStdio.declared_only(), Some(Edge::stdio));
        assert_eq!(Fault::OverStdio.rule(), RuleId::T2);
        assert_eq!(Fault::ALL, [Fault::Everywhere, Fault::OverStdio]);
        assert_eq!(Fault::OverStdio.name(), "over-stdio");
        assert_eq!(Fault::OverStdio.description(), "shows over stdio");
    }
}

#[test]
fn every_fault_has_its_own_name() {
    let mut names: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before, "a fault name is declared twice");
}
