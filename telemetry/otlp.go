package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// otlpExporter is the OTLP/HTTP (http/protobuf) span exporter: one POST of an
// ExportTraceServiceRequest per batch. It replaces the upstream otlptracehttp exporter,
// whose configuration package links gRPC and whose collector package links grpc-gateway:
// 53 more package inits in every executor process, ~3.5 MiB of rss_idle with tracing
// off (docs/bench.md). The request message is one repeated field (1: ResourceSpans), written
// with protowire, so the collector's generated package (and gRPC) is not linked.
type otlpExporter struct {
	url      string
	headers  map[string]string
	gzip     bool
	timeout  time.Duration
	client   *http.Client
	shutdown atomic.Bool
}

var _ sdktrace.SpanExporter = (*otlpExporter)(nil)

// otlpRetryFirst is the first pause before an export is retried after a 429/502/503/504
// (doubling, within the export's timeout).
const otlpRetryFirst = 500 * time.Millisecond

// newOTLPExporter reads the OTEL_EXPORTER_OTLP_[TRACES_]{ENDPOINT,HEADERS,TIMEOUT,
// COMPRESSION,CERTIFICATE,CLIENT_CERTIFICATE,CLIENT_KEY} variables from getenv, the
// signal-specific one winning (OpenTelemetry's exporter specification).
func newOTLPExporter(getenv func(string) string) (*otlpExporter, error) {
	get := func(suffix string) string {
		if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_" + suffix)); v != "" {
			return v
		}
		return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + suffix))
	}
	e := &otlpExporter{url: "http://localhost:4318/v1/traces", timeout: 10 * time.Second}
	if u := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); u != "" {
		e.url = u // the full URL, as given
	} else if u := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); u != "" {
		e.url = strings.TrimSuffix(u, "/") + "/v1/traces"
	}
	if _, err := url.ParseRequestURI(e.url); err != nil {
		return nil, fmt.Errorf("%w: OTLP endpoint: %v", ErrTraceConfig, err)
	}
	headers, err := parseOTLPHeaders(get("HEADERS"))
	if err != nil {
		return nil, err
	}
	e.headers = headers
	if v := get("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("%w: OTLP timeout %q (milliseconds)", ErrTraceConfig, v)
		}
		e.timeout = time.Duration(ms) * time.Millisecond
	}
	switch c := strings.ToLower(get("COMPRESSION")); c {
	case "gzip":
		e.gzip = true
	case "", "none":
	default:
		return nil, fmt.Errorf("%w: OTLP compression %q (gzip or none)", ErrTraceConfig, c)
	}
	tlsConf, err := otlpTLS(get("CERTIFICATE"), get("CLIENT_CERTIFICATE"), get("CLIENT_KEY"))
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConf
	e.client = &http.Client{Transport: tr}
	return e, nil
}

// parseOTLPHeaders parses "k1=v1,k2=v2" with URL-encoded keys and values.
func parseOTLPHeaders(s string) (map[string]string, error) {
	h := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		key, err1 := url.PathUnescape(strings.TrimSpace(k))
		val, err2 := url.PathUnescape(strings.TrimSpace(v))
		if !ok || key == "" || err1 != nil || err2 != nil {
			// the pair is not echoed: header values are credentials
			return nil, fmt.Errorf("%w: OTLP headers: a pair is not key=value (URL-encoded)", ErrTraceConfig)
		}
		h[key] = val
	}
	return h, nil
}

// otlpTLS is the exporter's TLS configuration: nil (the system roots) without files.
func otlpTLS(ca, cert, key string) (*tls.Config, error) {
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("reading the OTLP certificate: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: OTLP certificate %s holds no PEM certificate", ErrTraceConfig, ca)
		}
	}
	if cert != "" || key != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("loading the OTLP client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// ExportSpans posts spans as one ExportTraceServiceRequest, retrying 429/502/503/504
// within the timeout.
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.shutdown.Load() || len(spans) == 0 {
		return nil
	}
	body, err := encodeExportRequest(spans)
	if err != nil {
		return err
	}
	if e.gzip {
		var zb bytes.Buffer
		zw := gzip.NewWriter(&zb)
		_, _ = zw.Write(body)
		if err := zw.Close(); err != nil {
			return fmt.Errorf("compressing spans: %w", err)
		}
		body = zb.Bytes()
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	for pause := otlpRetryFirst; ; pause *= 2 {
		retry, err := e.post(ctx, body)
		if err == nil || !retry {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("exporting spans: %w (last: %v)", ctx.Err(), err)
		}
	}
}

// post sends one request; retry reports a status worth trying again.
func (e *otlpExporter) post(ctx context.Context, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("exporting spans: %w", err)
	}
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return true, fmt.Errorf("exporting spans: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // partial success ignored
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusBadGateway,
		resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
		return true, fmt.Errorf("exporting spans: collector answered %s", resp.Status)
	default:
		return false, fmt.Errorf("exporting spans: collector answered %s", resp.Status)
	}
}

// Shutdown stops exporting and closes the idle connections.
func (e *otlpExporter) Shutdown(context.Context) error {
	if e.shutdown.Swap(true) {
		return nil
	}
	e.client.CloseIdleConnections()
	return nil
}

// scopeKey groups spans by instrumentation scope within a resource.
type scopeKey struct {
	name, version, schema string
	attrs                 attribute.Distinct
}

// encodeExportRequest is the protobuf ExportTraceServiceRequest of spans: field 1
// (resource_spans) once per resource, spans grouped by scope, in order of appearance.
func encodeExportRequest(spans []sdktrace.ReadOnlySpan) ([]byte, error) {
	type group struct {
		rs     *tracepb.ResourceSpans
		scopes map[scopeKey]*tracepb.ScopeSpans
	}
	var order []*group
	byRes := map[attribute.Distinct]*group{}
	for _, s := range spans {
		res := s.Resource()
		rk := res.Equivalent()
		g := byRes[rk]
		if g == nil {
			g = &group{rs: &tracepb.ResourceSpans{Resource: &resourcepb.Resource{Attributes: keyValues(res.Attributes())}, SchemaUrl: res.SchemaURL()},
				scopes: map[scopeKey]*tracepb.ScopeSpans{}}
			byRes[rk] = g
			order = append(order, g)
		}
		sc := s.InstrumentationScope()
		sk := scopeKey{sc.Name, sc.Version, sc.SchemaURL, sc.Attributes.Equivalent()}
		ss := g.scopes[sk]
		if ss == nil {
			ss = &tracepb.ScopeSpans{Scope: scopeProto(sc), SchemaUrl: sc.SchemaURL}
			g.scopes[sk] = ss
			g.rs.ScopeSpans = append(g.rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, spanProto(s))
	}
	var out []byte
	for _, g := range order {
		b, err := proto.Marshal(g.rs)
		if err != nil {
			return nil, fmt.Errorf("encoding spans: %w", err)
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, b)
	}
	return out, nil
}

func scopeProto(sc instrumentation.Scope) *commonpb.InstrumentationScope {
	return &commonpb.InstrumentationScope{Name: sc.Name, Version: sc.Version, Attributes: keyValues(sc.Attributes.ToSlice())}
}

// OTLP span flags (trace.proto SpanFlags): the low byte is the W3C trace flags.
const (
	spanFlagsHasIsRemote = 0x100
	spanFlagsIsRemote    = 0x200
)

func spanProto(s sdktrace.ReadOnlySpan) *tracepb.Span {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	p := &tracepb.Span{
		TraceId: tid[:], SpanId: sid[:], TraceState: sc.TraceState().String(),
		Flags: uint32(sc.TraceFlags()) | spanFlagsHasIsRemote,
		Name:  s.Name(), Kind: tracepb.Span_SpanKind(s.SpanKind()),
		StartTimeUnixNano: unixNano(s.StartTime()), EndTimeUnixNano: unixNano(s.EndTime()),
		Attributes: keyValues(s.Attributes()), DroppedAttributesCount: uint32(s.DroppedAttributes()),
		DroppedEventsCount: uint32(s.DroppedEvents()), DroppedLinksCount: uint32(s.DroppedLinks()),
	}
	if parent := s.Parent(); parent.SpanID().IsValid() {
		psid := parent.SpanID()
		p.ParentSpanId = psid[:]
		if parent.IsRemote() {
			p.Flags |= spanFlagsIsRemote
		}
	}
	switch st := s.Status(); st.Code {
	case codes.Error:
		p.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: st.Description}
	case codes.Ok:
		p.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
	}
	for _, ev := range s.Events() {
		p.Events = append(p.Events, &tracepb.Span_Event{Name: ev.Name, TimeUnixNano: unixNano(ev.Time),
			Attributes: keyValues(ev.Attributes), DroppedAttributesCount: uint32(ev.DroppedAttributeCount)})
	}
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		p.Links = append(p.Links, &tracepb.Span_Link{TraceId: ltid[:], SpanId: lsid[:], TraceState: l.SpanContext.TraceState().String(),
			Attributes: keyValues(l.Attributes), DroppedAttributesCount: uint32(l.DroppedAttributeCount),
			Flags: uint32(l.SpanContext.TraceFlags()) | spanFlagsHasIsRemote | remoteFlag(l.SpanContext)})
	}
	return p
}

func remoteFlag(sc trace.SpanContext) uint32 {
	if sc.IsRemote() {
		return spanFlagsIsRemote
	}
	return 0
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

func keyValues(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

// anyValue is the OTLP AnyValue of v; an empty value is an AnyValue with none set.
func anyValue(v attribute.Value) *commonpb.AnyValue {
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.AsString()}}
	case attribute.BYTESLICE:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}}
	case attribute.BOOLSLICE:
		return arrayOf(v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return arrayOf(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return arrayOf(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return arrayOf(v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		return arrayOf(v.AsSlice(), func(x attribute.Value) attribute.Value { return x })
	case attribute.MAP:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: keyValues(v.AsMap())}}}
	default:
		return &commonpb.AnyValue{}
	}
}

func arrayOf[T any](xs []T, value func(T) attribute.Value) *commonpb.AnyValue {
	arr := &commonpb.ArrayValue{Values: make([]*commonpb.AnyValue, 0, len(xs))}
	for _, x := range xs {
		arr.Values = append(arr.Values, anyValue(value(x)))
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: arr}}
}
