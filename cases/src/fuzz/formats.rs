//! String `format`s (JSON Schema's format vocabulary, asserted by the
//! validator mcperr classifies values with): several valid forms of each,
//! reaching the corners a parser trips on (a leap day, an offset, a
//! fraction of a second, an IPv6 short form, an escaped URI), and near
//! misses, forms one step from valid (the 30th of February, a missing
//! scheme, an octet of 256), which break exactly the `format` constraint.
//! Both sides are checked by the validator before use: a form the validator
//! judges otherwise is not sent as what it claims to be.

use super::source::Source;

/// Valid forms of `format`, the plainest first; `None` for a format mcperr
/// has no forms for (the value is then drawn as an ordinary string).
fn valid_forms(format: &str) -> Option<&'static [&'static str]> {
    Some(match format {
        "uri" | "iri" => &[
            "https://example.com/mcperr",
            "https://example.com:8443/a/b?q=1&r=%C3%A9#frag",
            "urn:isbn:0451450523",
            "file:///tmp/mcperr.txt",
            "mailto:mcperr@example.com",
        ],
        "uri-reference" | "iri-reference" => {
            &["https://example.com/mcperr", "../a/b?c#d", "", "#x"]
        }
        "email" | "idn-email" => &[
            "mcperr@example.com",
            "first.last+tag@sub.example.co.uk",
            "\"quoted local\"@example.com",
        ],
        "date" => &["2026-01-01", "2024-02-29", "1970-01-01", "9999-12-31"],
        "date-time" => &[
            "2026-01-01T00:00:00Z",
            "2024-02-29T23:59:59.999+14:00",
            "1970-01-01T00:00:00-12:00",
            "2026-12-31t23:59:59z",
        ],
        "time" => &["00:00:00Z", "23:59:59.5+01:00", "12:00:00-05:30"],
        "duration" => &["P1D", "PT0S", "P1Y2M3DT4H5M6S", "P2W"],
        "uuid" => &[
            "00000000-0000-4000-8000-000000000000",
            "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF",
            "00000000-0000-0000-0000-000000000000",
        ],
        "hostname" | "idn-hostname" => &["example.com", "a", "xn--bcher-kva.example", "localhost"],
        "ipv4" => &["192.0.2.1", "0.0.0.0", "255.255.255.255", "127.0.0.1"],
        "ipv6" => &[
            "2001:db8::1",
            "::",
            "::1",
            "::ffff:192.0.2.1",
            "fe80::1:2:3:4",
        ],
        "json-pointer" => &["/mcperr", "", "/a~1b/c~0d/0"],
        "relative-json-pointer" => &["0", "1/a", "2#"],
        "regex" => &["^mcperr$", "[a-z]+", "(a|b)*"],
        "uri-template" => &["https://example.com/{id}", "/search{?q,lang}"],
        _ => return None,
    })
}

/// Forms one step from valid for `format`.
fn near_misses(format: &str) -> Option<&'static [&'static str]> {
    Some(match format {
        "uri" | "iri" => &[
            "example.com/mcperr",
            "https//example.com",
            "://example.com",
            "https://exa mple.com",
        ],
        "email" | "idn-email" => &[
            "mcperr@",
            "@example.com",
            "mcperr.example.com",
            "a@@example.com",
        ],
        "date" => &[
            "2026-02-30",
            "2026-13-01",
            "2026-1-1",
            "2023-02-29",
            "26-01-01",
        ],
        "date-time" => &[
            "2026-01-01T24:00:01Z",
            "2026-01-01 00:00:00",
            "2026-01-01T00:00:00",
            "2026-02-30T00:00:00Z",
        ],
        "time" => &["24:00:00Z", "12:60:00Z", "12:00:00"],
        "duration" => &["P", "1D", "PT", "P1H"],
        "uuid" => &[
            "00000000-0000-4000-8000-00000000000",
            "0000000000004000800000000000000g",
            "{00000000-0000-4000-8000-000000000000}",
        ],
        "hostname" | "idn-hostname" => &["-example.com", "exa_mple.com", "example..com"],
        "ipv4" => &["256.0.0.1", "192.0.2", "192.0.2.1.5", "01.2.3.4"],
        "ipv6" => &["2001:db8:::1", "2001:db8::g", "1:2:3:4:5:6:7:8:9"],
        "json-pointer" => &["mcperr", "/a~2b"],
        "relative-json-pointer" => &["-1", "/a"],
        "regex" => &["(unclosed", "[a-", "*a"],
        _ => return None,
    })
}

/// A valid form of `format` (the plainest half the time), or `None`.
pub fn valid_form(format: &str, src: &mut dyn Source) -> Option<&'static str> {
    let forms = valid_forms(format)?;
    Some(if src.chance(1, 2) {
        forms[0]
    } else {
        forms[src.index(forms.len())]
    })
}

/// A near miss of `format`, or `None`.
pub fn near_miss(format: &str, src: &mut dyn Source) -> Option<&'static str> {
    let forms = near_misses(format)?;
    Some(forms[src.index(forms.len())])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FORMATS: &[&str] = &[
        "uri",
        "uri-reference",
        "email",
        "date",
        "date-time",
        "time",
        "duration",
        "uuid",
        "hostname",
        "ipv4",
        "ipv6",
        "json-pointer",
        "relative-json-pointer",
        "regex",
        "uri-template",
    ];

    #[test]
    fn every_valid_form_is_valid_and_every_near_miss_breaks_only_its_format() {
        let mut checked = 0;
        for f in FORMATS {
            let schema = json!({"type": "string", "format": f});
            let v = crate::generate::validator(&schema).unwrap();
            for form in valid_forms(f).unwrap() {
                // A form the validator does not take is never sent as valid
                // (values.rs checks each); here every listed one must pass.
                assert!(v.is_valid(&json!(form)), "{f}: {form:?} should be valid");
                checked += 1;
            }
            for miss in near_misses(f).into_iter().flatten() {
                let errors = v.iter_errors(&json!(miss)).count();
                assert_eq!(errors, 1, "{f}: {miss:?} should break its format");
                checked += 1;
            }
        }
        assert!(checked > 80, "{checked}");
    }
}
