//! After a campaign, before shrinking: which findings only an id style
//! brings about (each re-sent once with a small counter id, so a server that
//! answers every big id the same wrong way is one finding), and which
//! finding of each group is shrunk. Sends through [`super::probe`]; called
//! by [`super::campaign`].

use std::sync::atomic::Ordering;

use mcperr_cases::fuzz::Class;
use mcperr_wire::exchange::Ending;
use serde_json::Value;

use super::probe::{lost, probe};
use super::worker::Worker;
use super::Found;
use crate::client::Client;
use crate::engine::{connect, EraChoice};

/// Re-sends the request of each finding that only requests with ids of
/// another style showed (a string, a negative number, beyond 2^31 or 2^53)
/// with a small counter id: when that shows none of it, the id alone brought
/// it about, and the finding joins its id style's group
/// ([`mcperr_oracle::findings::judge::id_group_key`]): a server that answers every
/// big id the same wrong way is one finding, not one per tool and rule. One
/// re-send per request; silence and findings about ids themselves are left
/// as they are (the RFC 8259 policy and the id aspects judge those).
pub(crate) async fn attribute_ids(
    w: &mut Worker<'_>,
    mut client: Option<Client>,
    store: &super::Store,
) -> Option<Client> {
    use mcperr_cases::fuzz::IdStyle;
    use mcperr_model::rules::AspectId;
    use mcperr_oracle::findings::judge::{finding_id, id_group_key};
    let mut shown: std::collections::HashMap<String, Vec<String>> = Default::default();
    let mut controls: std::collections::HashMap<String, Value> = Default::default();
    for found in store.unshrunk() {
        let f = &found.finding;
        let style = found.input.id_style;
        let about_ids = matches!(
            f.aspect,
            AspectId::J1IdType | AspectId::J1BigId | AspectId::J1ErrorId
        );
        // A valid call of a tool that writes is not sent again.
        let writes = found.input.class == Class::ValidCall && w.gen.writes(&found.input.target);
        if style == IdStyle::Counter
            || writes
            || about_ids
            || found.input.is_stray_output()
            || f.group.starts_with("ids ")
            || f.signature.ends_with("no answer")
            || f.signature.ends_with("(alive)")
        {
            continue;
        }
        if w.settings.stats.stop.load(Ordering::Relaxed) {
            break;
        }
        let key = f.request.to_string();
        if !shown.contains_key(&key) {
            let mut c = match client.take() {
                Some(c) => c,
                None => match connect(&w.settings.run, EraChoice::Pinned(w.era)).await {
                    Ok((mut c, _)) => {
                        c.begin_case();
                        c
                    }
                    Err(_) => break,
                },
            };
            let mut small = found.input.clone();
            small.id_style = IdStyle::Counter;
            let (ex, ran) = probe(w, &mut c, &small).await;
            controls.insert(
                key.clone(),
                ex.request.get("id").cloned().unwrap_or_default(),
            );
            w.shrink_requests.fetch_add(1, Ordering::Relaxed);
            if lost(&ex) {
                // The control itself went wrong: nothing is attributed.
                c.conn.close().await;
                continue;
            }
            client = Some(c);
            if !matches!(ex.ending, Ending::Answered(_)) {
                // A control answered with another id is no clean control
                // (its answer's other rules go unjudged): nothing is attributed.
                shown.insert(key.clone(), vec![f.signature.clone()]);
                continue;
            }
            let output = matches!(small.class, Class::ValidCall)
                .then(|| w.gen.output_validator(&small.target))
                .flatten();
            let signatures = w
                .judge
                .judge(&small, &ex, ran, output)
                .into_iter()
                .map(|f| f.signature)
                .collect();
            shown.insert(key.clone(), signatures);
        }
        if !shown[&key].contains(&f.signature) {
            let group = id_group_key(style, &f.response);
            let slug = format!("{style:?}").to_lowercase();
            let id = finding_id("ids", &slug, &group);
            let why = format!(
                "the same request with id {} got none of it",
                controls
                    .get(&key)
                    .map_or_else(|| "1".into(), Value::to_string)
            );
            store.regroup(&f.signature, group, id, &why);
        }
    }
    client
}

/// The findings of `unshrunk` worth shrinking: one per group, its worst and
/// smallest example, and none for a group that an earlier era already
/// shrank; the others are marked done (they fold into it when the campaign
/// ends).
pub(crate) fn representatives(unshrunk: Vec<Found>, store: &super::Store) -> Vec<Found> {
    let done: std::collections::HashSet<String> = store
        .all()
        .into_iter()
        .filter(|f| f.shrunk)
        .map(|f| f.finding.group)
        .collect();
    // Grouping folds counts into the chosen; each is shrunk as it is stored
    // (the store keeps each member's own).
    let chosen: std::collections::HashSet<String> =
        mcperr_oracle::findings::group::group(unshrunk.clone())
            .into_iter()
            .filter(|f| !done.contains(&f.finding.group))
            .map(|f| f.finding.signature)
            .collect();
    let (picked, rest): (Vec<Found>, Vec<Found>) = unshrunk
        .into_iter()
        .partition(|f| chosen.contains(&f.finding.signature));
    for found in rest {
        store.skip_shrinking(&found.finding.signature);
    }
    picked
}
