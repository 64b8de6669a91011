//! Every container's requests and limits as the API server validates them on create:
//! a pod it refuses is a job whose operator never gets a pod running, and nobody
//! hears of it until they read the job's events. Rendered output (PyTorchJobs, the
//! Trainer runtime's pods and the pod a TrainJob gets, the smoke test's job) and
//! linted manifests are checked here, through `manifest`'s pod rules.
//!
//! A transcription of Kubernetes v1.33.3 (the release whose schemas rdmagen embeds),
//! `pkg/apis/core/validation/validation.go`:
//! `validateResourceRequirements` (L7124-L7191), `ValidateResourceQuantityValue`
//! (L7411-L7420), `ValidateNonnegativeQuantity` (L346-L352) and
//! `validateResourceQuantityHugePageValue` (L7253-L7263); with the helpers of
//! `pkg/apis/core/helper/helpers.go`: `IsHugePageResourceName` (L37-L39),
//! `IsHugePageResourceValueDivisible` (L43-L54), `IsExtendedResourceName`
//! (L183-L193), `IsNativeResource` (L198-L201), `IsOvercommitAllowed` (L205-L208),
//! `IsIntegerResourceName` (L290-L292). Quantities are compared exactly
//! (`kubernetes::quantity::Exact`), as `Quantity.Cmp` compares them.
//!
//! Not transcribed: resource names (validateContainerResourceName: an unprefixed name
//! must be cpu, memory, ephemeral-storage or hugepages-*, a prefixed one a qualified
//! name), resource claims, and pod-level `spec.resources`.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::diagnostics::message::{capped, pointer_segment, quoted};
use crate::diagnostics::{Finding, Rule};
use crate::kubernetes::quantity::Exact;

/// helpers.go `core.ResourceHugePagesPrefix` (types.go L5565).
const HUGE_PAGES_PREFIX: &str = "hugepages-";
/// The most findings one container's resources give: a manifest may hold tens of
/// thousands of request keys, and each finding is located in the file.
const MAX_FINDINGS_PER_CONTAINER: usize = 16;

/// validation.go L7132 `supportedQoSComputeResources`.
const QOS_COMPUTE: [&str; 2] = ["cpu", "memory"];

/// The findings about the resources of every container and init container of `pod`, a
/// pod spec at JSON Pointer `base`.
pub(crate) fn check(pod: &Value, base: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    // validation.go L3651: validateContainerCommon checks each container's resources,
    // init containers (validateInitContainers, L3548) and regular ones alike.
    for list in ["containers", "initContainers"] {
        let containers = pod[list].as_array().map(Vec::as_slice).unwrap_or_default();
        for (i, container) in containers.iter().enumerate() {
            let at = format!("{base}/{list}/{i}/resources");
            let found = requirements(&container["resources"], &at, container);
            out.extend(capped(
                found,
                MAX_FINDINGS_PER_CONTAINER,
                "this container's resources",
            ));
        }
    }
    out
}

/// validateResourceRequirements (validation.go L7124-L7191) for one container's
/// `resources`, at `at`.
fn requirements(resources: &Value, at: &str, container: &Value) -> Vec<Finding> {
    let empty = Map::new();
    let limits = resources["limits"].as_object().unwrap_or(&empty);
    let requests = resources["requests"].as_object().unwrap_or(&empty);
    let who = match container["name"].as_str() {
        Some(name) => format!("container `{name}`"),
        None => "a container".to_owned(),
    };
    let mut out = Vec::new();
    let mut huge_pages = false;
    let mut cpu_or_memory = false;
    // L7133-L7152: each limit's value, and whether it names hugepages or cpu/memory.
    let mut parsed_limits = HashMap::new();
    for (name, value) in limits {
        let pointer = format!("{at}/limits/{}", pointer_segment(name));
        let amount = amount(&mut out, name, value, &pointer, "limits");
        huge_pages |= is_huge_pages(name);
        cpu_or_memory |= QOS_COMPUTE.contains(&name.as_str());
        parsed_limits.insert(name.as_str(), amount);
    }
    // L7153-L7183: each request's value, then the request against its limit.
    for (name, value) in requests {
        let pointer = format!("{at}/requests/{}", pointer_segment(name));
        let request = amount(&mut out, name, value, &pointer, "requests");
        huge_pages |= is_huge_pages(name);
        cpu_or_memory |= QOS_COMPUTE.contains(&name.as_str());
        match parsed_limits.get(name.as_str()) {
            // L7163-L7169. A value that is no quantity is reported above; the API
            // server cannot decode the pod at all then, so nothing is compared.
            Some(Some(limit)) => {
                let Some(request) = request else { continue };
                let limit_text = quoted(&limits[name.as_str()]);
                let request_text = quoted(value);
                if request != *limit && !is_overcommit_allowed(name) {
                    out.push(Finding::at_pointer(
                        Rule::NotOvercommittable,
                        format!(
                            "{who} requests {name} {request_text} but limits it to {limit_text}: a resource that cannot be overcommitted must be requested exactly at its limit (the API server: \"must be equal to {name} limit\"), so the pod is refused"
                        ),
                        pointer,
                    ));
                } else if request > *limit {
                    out.push(Finding::at_pointer(
                        Rule::RequestAboveLimit,
                        format!(
                            "{who} requests {name} {request_text}, above its limit {limit_text} (the API server: \"must be less than or equal to {name} limit\"), so the pod is refused"
                        ),
                        pointer,
                    ));
                }
            }
            Some(None) => {}
            // L7170-L7172.
            None if !is_overcommit_allowed(name) => out.push(Finding::at_pointer(
                Rule::NotOvercommittable,
                format!(
                    "{who} requests {name} without a limit: a resource that cannot be overcommitted needs one, equal to the request (the API server: \"Limit must be set for non overcommitable resources\"), so the pod is refused; set limits.{name} (a limit alone is enough, Kubernetes copies it to the request)"
                ),
                pointer,
            )),
            None => {}
        }
    }
    // L7184-L7186.
    if huge_pages && !cpu_or_memory {
        out.push(Finding::at_pointer(
            Rule::HugePagesShape,
            format!(
                "{who} asks for hugepages but neither requests nor limits cpu or memory (the API server: \"HugePages require cpu or memory\"), so the pod is refused"
            ),
            at.to_owned(),
        ));
    }
    out
}

/// One request's or limit's value: ValidateResourceQuantityValue (L7411-L7420) and,
/// for hugepages, validateResourceQuantityHugePageValue (L7253-L7263). Returns the
/// amount when it is a quantity. YAML integers (`cpu: 8`) are quantities too, as
/// Quantity's UnmarshalJSON reads them; every pod checked here sits in a custom
/// resource (PyTorchJob, TrainJob, a runtime) whose CRD types each value
/// `x-kubernetes-int-or-string`, so any other JSON value (`0.5` unquoted, `true`) is
/// refused before the pod is ever made.
fn amount(
    out: &mut Vec<Finding>,
    name: &str,
    value: &Value,
    pointer: &str,
    section: &str,
) -> Option<Exact> {
    let shown = quoted(value);
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        _ => {
            out.push(Finding::at_pointer(
                Rule::ResourceValueInvalid,
                format!(
                    "{section}.{name} is {shown}, which the CRD's int-or-string type refuses (an integer or a string only): quote the quantity"
                ),
                pointer,
            ));
            return None;
        }
    };
    let Some(amount) = Exact::parse(&text) else {
        out.push(Finding::at_pointer(
            Rule::ResourceValueInvalid,
            format!(
                "{section}.{name} is {shown}, not a Kubernetes quantity such as 8, 500m or 64Gi: the API server cannot read the pod"
            ),
            pointer,
        ));
        return None;
    };
    // ValidateNonnegativeQuantity (L346-L352).
    if amount.is_negative() {
        out.push(Finding::at_pointer(
            Rule::ResourceValueInvalid,
            format!("{section}.{name} is {shown}: it must be greater than or equal to 0"),
            pointer,
        ));
    }
    // L7414-L7418: extended resources are counted in whole units (MilliValue % 1000).
    if is_integer_resource(name) && !amount.is_whole_in_millis() {
        out.push(Finding::at_pointer(
            Rule::ResourceValueInvalid,
            format!(
                "{section}.{name} is {shown}: a device plugin's resource counts whole devices, so it must be an integer"
            ),
            pointer,
        ));
    }
    if is_huge_pages(name) && !huge_pages_divisible(name, &amount) {
        out.push(Finding::at_pointer(
            Rule::HugePagesShape,
            format!(
                "{section}.{name} is {shown}, not a positive whole number of {} pages",
                &name[HUGE_PAGES_PREFIX.len()..]
            ),
            pointer,
        ));
    }
    Some(amount)
}

/// helpers.go IsHugePageResourceName (L37-L39).
fn is_huge_pages(name: &str) -> bool {
    name.starts_with(HUGE_PAGES_PREFIX)
}

/// helpers.go IsNativeResource (L198-L201): unprefixed, or in kubernetes.io.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// helpers.go IsOvercommitAllowed (L205-L208).
fn is_overcommit_allowed(name: &str) -> bool {
    is_native(name) && !is_huge_pages(name)
}

/// helpers.go IsIntegerResourceName (L290-L292), for a container's resources: the
/// quota names it also lists (pods, services, ...) are no container resource, so what
/// is left is IsExtendedResourceName (L183-L193). Its last test, that
/// `requests.<name>` is a qualified name, is left out: a name failing it is refused
/// as a name, which this module does not judge (see the module's notes).
fn is_integer_resource(name: &str) -> bool {
    !is_native(name) && !name.starts_with("requests.")
}

/// helpers.go IsHugePageResourceValueDivisible (L43-L54): the page size is the
/// quantity after the prefix, a positive whole number, and Value() (ceil) is a
/// multiple of it. validateResourceQuantityHugePageValue (L7258) relaxes this only on
/// update of a pod that already holds such a value, never on create.
fn huge_pages_divisible(name: &str, amount: &Exact) -> bool {
    let Some(page) = Exact::parse(&name[HUGE_PAGES_PREFIX.len()..]) else {
        return false;
    };
    if page.is_negative() || page.is_zero() || !page.is_whole_in_millis() {
        return false;
    }
    match (amount.ceil_value(), page.ceil_value()) {
        (Some(value), Some(page)) => value % page == 0,
        // Beyond 10^38 bytes: no pod asks for that; leave it to the API server.
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// (rule ID, pointer) of each finding about a pod with one container `resources`.
    fn found(resources: Value) -> Vec<(&'static str, String)> {
        let pod =
            json!({"containers": [{"name": "pytorch", "image": "i", "resources": resources}]});
        check(&pod, "/spec")
            .into_iter()
            .map(|f| (f.rule.info().id, f.pointer.unwrap_or_default()))
            .collect()
    }

    const REQ: &str = "/spec/containers/0/resources/requests";
    const LIM: &str = "/spec/containers/0/resources/limits";

    /// The attack's inputs: `cpu: 0.5` unquoted and `cpu: true` were let through,
    /// and the PyTorchJob CRD refuses both.
    #[test]
    fn only_integers_and_strings_are_quantities_in_a_crd() {
        for value in [json!(0.5), json!(true), json!([1]), json!(null)] {
            let bad = found(json!({"limits": {"cpu": value}}));
            assert_eq!(bad, [("RDG162", format!("{LIM}/cpu"))], "{value}");
        }
        assert!(found(json!({"limits": {"cpu": 2, "memory": "1Gi"}})).is_empty());
    }

    /// 40 000 request keys once took 9 s (a lookup per key over the limits, and a
    /// finding located per key); the findings are capped per container.
    #[test]
    fn findings_are_capped_per_container() {
        let requests: Map<String, Value> = (0..5000)
            .map(|i| (format!("example.com/r{i}"), json!("1")))
            .collect();
        let pod = json!({"containers": [{"name": "c", "resources": {"requests": requests}}]});
        let findings = check(&pod, "/spec");
        assert_eq!(findings.len(), MAX_FINDINGS_PER_CONTAINER);
        assert!(
            findings[MAX_FINDINGS_PER_CONTAINER - 1]
                .message
                .ends_with("(4984 more findings about this container's resources not shown)")
        );
    }

    #[test]
    fn a_request_above_its_limit_is_refused_l7167() {
        let over = found(json!({"requests": {"cpu": "100"}, "limits": {"cpu": "8"}}));
        assert_eq!(over, [("RDG160", format!("{REQ}/cpu"))]);
        // Compared as quantities, not as text or floats.
        assert!(found(json!({"requests": {"cpu": "500m"}, "limits": {"cpu": 1}})).is_empty());
        assert!(found(json!({"requests": {"cpu": "8"}, "limits": {"cpu": "8000m"}})).is_empty());
        assert_eq!(
            found(json!({"requests": {"memory": "1Gi"}, "limits": {"memory": "1G"}})),
            [("RDG160", format!("{REQ}/memory"))]
        );
        assert!(
            found(json!({"requests": {"memory": "1G"}, "limits": {"memory": "1Gi"}})).is_empty()
        );
        // Overcommittable: a request with no limit, or below it, is fine (L7170).
        assert!(found(json!({"requests": {"cpu": "100", "memory": "1Ti"}})).is_empty());
        assert!(found(json!({"requests": {"ephemeral-storage": "1Gi"}, "limits": {"ephemeral-storage": "2Gi"}})).is_empty());
        // kubernetes.io/ names are native (IsNativeResource), so overcommittable.
        assert!(found(json!({"requests": {"example.kubernetes.io/x": "2"}, "limits": {"example.kubernetes.io/x": "3"}})).is_empty());
    }

    #[test]
    fn extended_resources_and_hugepages_need_an_equal_limit_l7165_l7171() {
        for name in [
            "nvidia.com/gpu",
            "rdma/hca_shared_devices_a",
            "hugepages-2Mi",
        ] {
            let amount = if name.starts_with("huge") { "4Mi" } else { "8" };
            let lower = if name.starts_with("huge") { "2Mi" } else { "4" };
            let key = pointer_segment(name);
            // Below the limit (L7165) as well as above it.
            assert_eq!(
                found(json!({"requests": {name: lower, "cpu": 1}, "limits": {name: amount}})),
                [("RDG161", format!("{REQ}/{key}"))],
                "{name}"
            );
            // No limit at all (L7170-L7171).
            assert_eq!(
                found(json!({"requests": {name: amount, "cpu": 1}})),
                [("RDG161", format!("{REQ}/{key}"))],
                "{name}"
            );
            // A limit alone, or an equal request, is what the API server wants.
            assert!(
                found(json!({"limits": {name: amount, "cpu": 1}})).is_empty(),
                "{name}"
            );
            assert!(
                found(json!({"requests": {name: amount, "cpu": 1}, "limits": {name: amount}}))
                    .is_empty(),
                "{name}"
            );
        }
        // Equal as quantities, not as text.
        assert!(
            found(json!({"requests": {"nvidia.com/gpu": 8}, "limits": {"nvidia.com/gpu": "8"}}))
                .is_empty()
        );
    }

    #[test]
    fn quantity_values_l7411_l7420() {
        let lim = "/spec/containers/0/resources/limits";
        // Extended resources count whole units (IsIntegerResourceName).
        assert_eq!(
            found(json!({"limits": {"nvidia.com/gpu": "0.5"}})),
            [("RDG162", format!("{lim}/nvidia.com~1gpu"))]
        );
        assert_eq!(
            found(json!({"limits": {"rdma/ib": "500m"}})),
            [("RDG162", format!("{lim}/rdma~1ib"))]
        );
        assert!(found(json!({"limits": {"rdma/ib": "1000m"}})).is_empty());
        // cpu is not an integer resource.
        assert!(found(json!({"limits": {"cpu": "500m"}})).is_empty());
        // Negative (ValidateNonnegativeQuantity, L346-L352), anywhere.
        assert_eq!(
            found(json!({"requests": {"memory": "-1Gi"}})),
            [("RDG162", format!("{REQ}/memory"))]
        );
        // Not a quantity at all: reported, and not compared.
        assert_eq!(
            found(json!({"requests": {"memory": "1GB"}, "limits": {"memory": "2Gi"}})),
            [("RDG162", format!("{REQ}/memory"))]
        );
        // A value of another type: the CRD's int-or-string refuses it (lint has no
        // Kubernetes schema check to say so).
        assert_eq!(
            found(json!({"requests": {"cpu": true}})),
            [("RDG162", format!("{REQ}/cpu"))]
        );
    }

    #[test]
    fn hugepages_l7142_l7184_and_page_multiples() {
        let lim = "/spec/containers/0/resources/limits";
        // Not a multiple of the page size (IsHugePageResourceValueDivisible).
        assert_eq!(
            found(json!({"limits": {"hugepages-2Mi": "3Mi", "memory": "1Gi"}})),
            [("RDG163", format!("{lim}/hugepages-2Mi"))]
        );
        assert!(found(json!({"limits": {"hugepages-1Gi": "2Gi", "memory": "4Gi"}})).is_empty());
        // A page size that is no quantity divides nothing.
        assert_eq!(
            found(json!({"limits": {"hugepages-big": "2Mi", "cpu": 1}})),
            [("RDG163", format!("{lim}/hugepages-big"))]
        );
        // Hugepages without cpu or memory (L7184-L7186), at the resources block.
        assert_eq!(
            found(json!({"limits": {"hugepages-2Mi": "2Mi"}})),
            [("RDG163", "/spec/containers/0/resources".to_owned())]
        );
    }

    #[test]
    fn init_containers_are_checked_too() {
        let pod = json!({"containers": [{"name": "pytorch", "image": "i"}],
            "initContainers": [{"name": "fetch", "image": "i",
                "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]});
        let found: Vec<_> = check(&pod, "/spec")
            .into_iter()
            .map(|f| (f.rule, f.pointer.unwrap_or_default(), f.message))
            .collect();
        assert_eq!(
            found,
            [(
                Rule::RequestAboveLimit,
                "/spec/initContainers/0/resources/requests/cpu".to_owned(),
                "container `fetch` requests cpu \"2\", above its limit \"1\" (the API server: \"must be less than or equal to cpu limit\"), so the pod is refused".to_owned()
            )]
        );
    }
}
