// Package telemetry builds the CLI's OpenTelemetry providers from the
// standard OTEL_* environment variables. It is the only place mcpward
// links OpenTelemetry's SDK and exporters; the library takes the
// providers through composition.Config.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpward/mcpward/composition"
)

// ShutdownBound bounds how long Providers.Shutdown waits for the
// exporters to flush (an OTLP collector that does not answer never holds
// the CLI's exit longer).
const ShutdownBound = 5 * time.Second

// Providers are the providers the environment asked for. A nil field
// means that signal is off.
type Providers struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider

	shutdown []func(context.Context) error
}

// Shutdown flushes and stops the providers within ShutdownBound (ctx may
// shorten it). Errors are joined; their text names no endpoint header
// value. Safe to call on a zero Providers.
func (p *Providers) Shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ShutdownBound)
	defer cancel()
	var errs []error
	for _, f := range p.shutdown {
		if err := f(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// The exporter names of OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER
// that mcpward honours.
const (
	ExporterOTLP    = "otlp"
	ExporterConsole = "console"
	ExporterNone    = "none"
)

// New reads the OTEL_* variables through lookup and builds the providers
// they ask for:
//
//   - OTEL_SDK_DISABLED=true turns everything off.
//   - OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER (comma-separated):
//     "otlp" exports over OTLP/HTTP (protobuf) to the endpoint of
//     OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT,
//     with the headers, timeout, compression and certificates of the
//     other OTEL_EXPORTER_OTLP_* variables (read by the exporter itself);
//     "console" writes spans (and metrics) as JSON lines to stderr, so a
//     --json document on stdout stays clean; "none" exports nothing.
//     Unlike the SDK's default, an unset variable means none — unless an
//     OTLP endpoint variable is set, which means otlp — so the CLI never
//     opens a connection nobody asked for.
//   - OTEL_EXPORTER_OTLP_PROTOCOL (and the per-signal ones) must be
//     http/protobuf (the default); grpc and http/json are not linked.
//   - OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the resource
//     (service.name defaults to "mcpward", service.version is version);
//     OTEL_TRACES_SAMPLER and OTEL_BSP_* and OTEL_METRIC_EXPORT_* are the
//     SDK's.
//
// A value it cannot honour is reported on stderr in one line naming the
// variable (never its value) and that signal stays off; New never fails
// the run.
func New(ctx context.Context, lookup func(string) (string, bool), stderr io.Writer, version string) *Providers {
	p := &Providers{}
	get := func(k string) string {
		v, _ := lookup(k)
		return strings.TrimSpace(v)
	}
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return p
	}
	warn := func(format string, a ...any) {
		fmt.Fprintf(stderr, "mcpward: telemetry: "+format+"\n", a...)
	}
	traces := exporters(get, "TRACES", warn)
	metrics := exporters(get, "METRICS", warn)
	if len(traces) == 0 && len(metrics) == 0 {
		return p
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("mcpward"), semconv.ServiceVersion(version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil {
		// A malformed OTEL_RESOURCE_ATTRIBUTES: keep what parsed.
		warn("OTEL_RESOURCE_ATTRIBUTES is malformed (ignored where it does not parse)")
	}
	if len(traces) > 0 {
		opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
		for _, e := range traces {
			switch e {
			case ExporterConsole:
				exp, err := stdouttrace.New(stdouttrace.WithWriter(stderr))
				if err != nil {
					warn("the console span exporter could not start")
					continue
				}
				opts = append(opts, sdktrace.WithSyncer(exp))
			case ExporterOTLP:
				exp, err := otlptracehttp.New(ctx)
				if err != nil {
					warn("the OTLP span exporter could not start (check OTEL_EXPORTER_OTLP_* )")
					continue
				}
				opts = append(opts, sdktrace.WithBatcher(exp))
			}
		}
		tp := sdktrace.NewTracerProvider(opts...)
		p.TracerProvider = tp
		p.shutdown = append(p.shutdown, tp.Shutdown)
	}
	if len(metrics) > 0 {
		opts := []sdkmetric.Option{sdkmetric.WithResource(res)}
		for _, e := range metrics {
			switch e {
			case ExporterConsole:
				exp, err := stdoutmetric.New(stdoutmetric.WithWriter(stderr))
				if err != nil {
					warn("the console metric exporter could not start")
					continue
				}
				opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
			case ExporterOTLP:
				exp, err := otlpmetrichttp.New(ctx)
				if err != nil {
					warn("the OTLP metric exporter could not start (check OTEL_EXPORTER_OTLP_* )")
					continue
				}
				opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
			}
		}
		mp := sdkmetric.NewMeterProvider(opts...)
		p.MeterProvider = mp
		p.shutdown = append(p.shutdown, mp.Shutdown)
	}
	return p
}

// exporters returns the exporters OTEL_<signal>_EXPORTER asks for (none
// when unset, otlp when unset but an OTLP endpoint is), deduplicated,
// with ExporterNone and what cannot be honoured dropped.
func exporters(get func(string) string, signal string, warn func(string, ...any)) []string {
	name := "OTEL_" + signal + "_EXPORTER"
	v := get(name)
	if v == "" {
		if get("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && get("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") == "" {
			return nil
		}
		v = ExporterOTLP
	}
	var out []string
	for _, e := range strings.Split(v, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		switch e {
		case ExporterNone:
			return nil
		case ExporterConsole:
		case ExporterOTLP:
			if proto := protocol(get, signal); proto != "http/protobuf" {
				warn("%s: only the http/protobuf protocol is supported (OTEL_EXPORTER_OTLP_PROTOCOL); %s export is off", name, strings.ToLower(signal))
				continue
			}
		default:
			warn("%s: unknown exporter (mcpward supports otlp, console, none); it is ignored", name)
			continue
		}
		if !contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// protocol is the OTLP protocol of signal: the per-signal variable, else
// the general one, else http/protobuf.
func protocol(get func(string) string, signal string) string {
	if v := get("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"); v != "" {
		return strings.ToLower(v)
	}
	if v := get("OTEL_EXPORTER_OTLP_PROTOCOL"); v != "" {
		return strings.ToLower(v)
	}
	return "http/protobuf"
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// AttrCommand is the attribute of a command's root span naming the
// command ("list", "egress check"): never an argument or a flag.
const AttrCommand = "mcpward.command"

// StartCommand starts the span of one run of the CLI command whose path is
// path ("mcpward list"), named path, INTERNAL, with AttrCommand the path
// after "mcpward" as its only attribute: the root of the run's trace (the
// library's spans are its children, through the returned context). The
// returned func ends it, with error.type (composition.ErrorType: a
// reason word, else "_OTHER") and an Error status when err is not nil.
// With a nil tp it returns ctx and a func that does nothing.
func StartCommand(ctx context.Context, tp trace.TracerProvider, path string) (context.Context, func(err error)) {
	if tp == nil {
		return ctx, func(error) {}
	}
	name := strings.TrimSpace(strings.TrimPrefix(path, "mcpward"))
	ctx, span := tp.Tracer(composition.TelemetryScope+"/cmd/mcpward", trace.WithSchemaURL(semconv.SchemaURL)).
		Start(ctx, path, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attribute.String(AttrCommand, name)))
	return ctx, func(err error) {
		if err != nil {
			et := composition.ErrorType(err)
			span.SetAttributes(semconv.ErrorTypeKey.String(et))
			span.SetStatus(codes.Error, et)
		}
		span.End()
	}
}
