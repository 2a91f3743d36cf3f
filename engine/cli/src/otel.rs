//! The optional OpenTelemetry export (cargo feature `otel`): each decision written to an event
//! log (a judgement, a person's answer to an ask) is also sent as an OTLP log record, so a team's
//! collector receives every agent's decisions. Configured by the standard variables
//! (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`, `…_PROTOCOL`
//! `http/protobuf` or `http/json`, `…_HEADERS`, `…_TIMEOUT`, `OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES`); off unless an endpoint is set, and off with `OTEL_SDK_DISABLED=true`.
//!
//! The record is the truth and the export only mirrors it: a line is handed over after it was
//! written, to a bounded queue a background thread drains, so the writer never waits on the
//! network. A full queue drops the record. When the command ends (for the hook: after its answer
//! is written) what is queued is sent with a short timeout, and a collector that is down or slow
//! costs at most that. Nothing here can change a decision.

use crate::log::{decision, Session};
use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _, Severity};
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::logs::{BatchConfigBuilder, BatchLogProcessor, SdkLoggerProvider};
use opentelemetry_sdk::Resource;
use serde_json::Value;
use sixfold_core::trace::Line;
use std::time::Duration;

/// The longest an export may take, whatever `OTEL_EXPORTER_OTLP_TIMEOUT` says (the
/// specification's default is 10 s): the hook process waits for it before it exits.
const MAX_TIMEOUT: Duration = Duration::from_millis(1000);

/// The timeout where no variable sets one.
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(500);

/// Records queued at most; past it a record is dropped, never waited for.
const MAX_QUEUE: usize = 2048;

/// The export while it runs; [`Export::finish`] sends what is queued.
#[derive(Debug)]
pub(crate) struct Export {
    provider: SdkLoggerProvider,
    timeout: Duration,
}

/// Starts the export where an endpoint is configured, and from then on hands every line written
/// to an event log in this process to it. `None` where it is off or cannot start (said on stderr).
pub(crate) fn start() -> Option<Export> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return None;
    }
    var("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT").or_else(|| var("OTEL_EXPORTER_OTLP_ENDPOINT"))?;
    let timeout = timeout(
        var("OTEL_EXPORTER_OTLP_LOGS_TIMEOUT")
            .or_else(|| var("OTEL_EXPORTER_OTLP_TIMEOUT"))
            .as_deref(),
    );
    let mut builder = opentelemetry_otlp::LogExporter::builder()
        .with_http()
        .with_timeout(timeout);
    // The specification's default, where no variable names a protocol (the crate's default
    // would be JSON, with both built in).
    if var("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL")
        .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"))
        .is_none()
    {
        builder = builder.with_protocol(opentelemetry_otlp::Protocol::HttpBinary);
    }
    let exporter = match builder.build() {
        Ok(exporter) => exporter,
        Err(e) => {
            crate::output::errln!("sixfold: the OpenTelemetry export is off: {e}");
            return None;
        }
    };
    let batch = BatchConfigBuilder::default().with_max_queue_size(MAX_QUEUE).build();
    let mut resource = Resource::builder();
    if var("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("sixfold");
    }
    let provider = SdkLoggerProvider::builder()
        .with_resource(resource.build())
        .with_log_processor(BatchLogProcessor::builder(exporter).with_batch_config(batch).build())
        .build();
    let logger = provider.logger("sixfold");
    sixfold_hook::log::observe(Box::new(move |session, line| {
        if let Some(record) = record(session, line) {
            let mut out = logger.create_log_record();
            out.set_event_name(record.name);
            if let Some(at) = record.time {
                out.set_timestamp(at);
            }
            out.set_observed_timestamp(std::time::SystemTime::now());
            out.set_severity_number(record.severity);
            out.set_severity_text(record.severity_text);
            out.set_body(AnyValue::String(record.body.into()));
            for (key, value) in record.attributes {
                out.add_attribute(key, value);
            }
            logger.emit(out);
        }
    }));
    Some(Export { provider, timeout })
}

impl Export {
    /// Sends what is queued, waiting at most a little over the export's timeout.
    pub(crate) fn finish(self) {
        let _ = self
            .provider
            .shutdown_with_timeout(self.timeout + Duration::from_millis(100));
    }
}

/// The export's timeout: the variable's milliseconds, at most [`MAX_TIMEOUT`].
fn timeout(asked: Option<&str>) -> Duration {
    asked
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_TIMEOUT)
        .min(MAX_TIMEOUT)
}

/// One decision as an OTLP log record.
#[derive(Debug)]
struct Record {
    name: &'static str,
    time: Option<std::time::SystemTime>,
    severity: Severity,
    severity_text: &'static str,
    /// The decision in OPA's shape, as `sixfold log export` writes it.
    body: String,
    attributes: Vec<(&'static str, AnyValue)>,
}

/// A line as a record, where it is a decision: its body is the decision in OPA's shape (one
/// mapping for both exports), its attributes what a collector's queries pick out.
fn record(session: &str, line: &Line) -> Option<Record> {
    let who = Session {
        id: session.to_string(),
        ..Session::default()
    };
    let decided = decision(line, &who, session)?;
    // A field of the decision, by its JSON pointer.
    let at = |pointer: &str| decided.pointer(pointer).and_then(Value::as_str).map(str::to_string);
    let mut attributes: Vec<(&'static str, AnyValue)> = Vec::new();
    let mut add = |key: &'static str, value: Option<String>| {
        if let Some(value) = value {
            attributes.push((key, AnyValue::String(value.into())));
        }
    };
    add("sixfold.decision_id", at("/decision_id"));
    add("sixfold.session", Some(session.to_string()));
    add("sixfold.path", at("/path"));
    add("sixfold.bundle", at("/bundles/sixfold/revision"));
    add("sixfold.step.id", at("/input/step/id"));
    add("sixfold.step.tool", at("/input/step/tool"));
    add("sixfold.step.act.kind", at("/input/step/act/kind"));
    add("sixfold.step.act.text", at("/input/step/act/text"));
    let (name, severity, severity_text) = if decided.pointer("/result/answer").is_some() {
        add("sixfold.answer", at("/result/answer"));
        add("sixfold.answer.by", at("/result/by"));
        ("sixfold.answer", Severity::Info, "INFO")
    } else {
        add("sixfold.decision", at("/result/decision"));
        add("sixfold.mode", at("/result/mode"));
        add("sixfold.reason", at("/result/reason"));
        add("sixfold.decided_by", at("/result/by"));
        let rules: Vec<AnyValue> = decided
            .pointer("/result/rules")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str().map(|r| AnyValue::String(r.to_string().into())))
            .collect();
        attributes.push(("sixfold.rules", AnyValue::ListAny(Box::new(rules))));
        match at("/result/decision").as_deref() {
            Some("allow") => ("sixfold.judgement", Severity::Info, "INFO"),
            _ => ("sixfold.judgement", Severity::Warn, "WARN"),
        }
    };
    Some(Record {
        name,
        time: line
            .stamp
            .timestamp
            .as_deref()
            .and_then(|t| humantime::parse_rfc3339(t).ok()),
        severity,
        severity_text,
        body: decided.to_string(),
        attributes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_is_short_whatever_is_asked() {
        assert_eq!(timeout(None), DEFAULT_TIMEOUT);
        assert_eq!(timeout(Some("200")), Duration::from_millis(200));
        assert_eq!(timeout(Some("10000")), MAX_TIMEOUT);
        assert_eq!(timeout(Some("soon")), DEFAULT_TIMEOUT);
    }
}
