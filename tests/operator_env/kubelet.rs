//! What the kubelet does with a container's `env` and `command`/`args`, transcribed.

use std::collections::BTreeMap;

/// The environment a container's processes start with: its `env` entries in order, a
/// later entry replacing an earlier one of the same name (kubernetes
/// pkg/kubelet/kubelet_pods.go, makeEnvironmentVariables: `tmpEnv[envVar.Name] =
/// runtimeVal`). The operator appends its variables after the user's, so its values win.
///
/// The kubelet also expands `$(VAR)` inside values; no manifest here uses it, so a value
/// holding `$(` is refused rather than simulated half-way.
pub fn environment(env: &[(String, String)]) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (name, value) in env {
        if value.contains("$(") {
            return Err(format!(
                "env {name}={value:?} refers to another variable; not transcribed"
            ));
        }
        out.insert(name.clone(), value.clone());
    }
    Ok(out)
}

/// `command` and `args`, each element expanded against the container's environment
/// (kubernetes pkg/kubelet/container/helpers.go, ExpandContainerCommandAndArgs:
/// `expansion.Expand(cmd, expansion.MappingFuncFor(envVarsToMap(envs)))`), then run as
/// one argv. No shell is involved: `$VAR` and `${VAR}` stay as they are.
pub fn argv(command: &[String], args: &[String], env: &BTreeMap<String, String>) -> Vec<String> {
    command
        .iter()
        .chain(args)
        .map(|word| expand(word, env))
        .collect()
}

/// kubernetes third_party/forked/golang/expansion/expand.go (02604f7db), `Expand`
/// (:38-73) with the mapping of `MappingFuncFor` (:22-33): a defined `$(NAME)` becomes
/// its value, an undefined one stays `$(NAME)` as written (syntaxWrap), `$$` is one `$`.
pub fn expand(input: &str, env: &BTreeMap<String, String>) -> String {
    let input = input.as_bytes();
    let mut buf: Vec<u8> = Vec::new();
    let mut checkpoint = 0;
    let mut cursor = 0;
    while cursor < input.len() {
        if input[cursor] == b'$' && cursor + 1 < input.len() {
            buf.extend_from_slice(&input[checkpoint..cursor]);
            let (read, is_var, advance) = try_read_variable_name(&input[cursor + 1..]);
            if is_var {
                let name = String::from_utf8_lossy(&read);
                match env.get(name.as_ref()) {
                    Some(value) => buf.extend_from_slice(value.as_bytes()),
                    None => buf.extend_from_slice(format!("$({name})").as_bytes()),
                }
            } else {
                buf.extend_from_slice(&read);
            }
            cursor += advance;
            checkpoint = cursor + 1;
        }
        cursor += 1;
    }
    buf.extend_from_slice(&input[checkpoint..]);
    String::from_utf8_lossy(&buf).into_owned()
}

/// expand.go:81-102, `tryReadVariableName`: (what was read, whether it names a variable,
/// how many bytes it consumed). `input` starts after the `$`.
fn try_read_variable_name(input: &[u8]) -> (Vec<u8>, bool, usize) {
    match input[0] {
        // Escaped operator: `$$` is one `$`.
        b'$' => (input[0..1].to_vec(), false, 1),
        // Scan to the closer.
        b'(' => match (1..input.len()).find(|&i| input[i] == b')') {
            Some(i) => (input[1..i].to_vec(), true, i + 1),
            // Incomplete reference: `$(` stays.
            None => (b"$(".to_vec(), false, 1),
        },
        // Not the beginning of an expression: the `$` and the byte after it stay.
        other => (vec![b'$', other], false, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansion_follows_the_kubelet() {
        let env: BTreeMap<String, String> = [("RANK", "3"), ("EMPTY", "")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        for (input, expected) in [
            ("--node_rank=$(RANK)", "--node_rank=3"),
            ("$(RANK)$(RANK)", "33"),
            ("$(UNSET)", "$(UNSET)"),
            ("$$(RANK)", "$(RANK)"),
            ("$RANK ${RANK}", "$RANK ${RANK}"),
            ("a$(EMPTY)b", "ab"),
            ("$(RANK", "$(RANK"),
            ("end$", "end$"),
            ("$", "$"),
        ] {
            assert_eq!(expand(input, &env), expected, "{input}");
        }
    }
}
