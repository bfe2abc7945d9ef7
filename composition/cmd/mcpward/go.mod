module github.com/mcpward/mcpward/composition/cmd/mcpward

go 1.26.0

replace (
	github.com/mcpward/mcpward/adapters/filestore => ../../../adapters/filestore
	github.com/mcpward/mcpward/adapters/hostconfig => ../../../adapters/hostconfig
	github.com/mcpward/mcpward/adapters/httptransport => ../../../adapters/httptransport
	github.com/mcpward/mcpward/adapters/internal/jsonrpcwire => ../../../adapters/internal/jsonrpcwire
	github.com/mcpward/mcpward/adapters/keychainstore => ../../../adapters/keychainstore
	github.com/mcpward/mcpward/adapters/mcpsession => ../../../adapters/mcpsession
	github.com/mcpward/mcpward/adapters/memstore => ../../../adapters/memstore
	github.com/mcpward/mcpward/adapters/oauth => ../../../adapters/oauth
	github.com/mcpward/mcpward/adapters/stdiotransport => ../../../adapters/stdiotransport
	github.com/mcpward/mcpward/composition => ../..
	github.com/mcpward/mcpward/composition/desktop => ../../desktop
	github.com/mcpward/mcpward/composition/internal/pgtest => ../../internal/pgtest
	github.com/mcpward/mcpward/composition/shared => ../../shared
	github.com/mcpward/mcpward/conformance => ../../../conformance
	github.com/mcpward/mcpward/core => ../../../core
	github.com/mcpward/mcpward/ports => ../../../ports
)

require (
	github.com/mcpward/mcpward/adapters/hostconfig v0.0.0
	github.com/mcpward/mcpward/adapters/httptransport v0.0.0
	github.com/mcpward/mcpward/adapters/oauth v0.0.0
	github.com/mcpward/mcpward/adapters/pgstore v0.0.0
	github.com/mcpward/mcpward/adapters/stdiotransport v0.0.0
	github.com/mcpward/mcpward/composition v0.0.0
	github.com/mcpward/mcpward/composition/desktop v0.0.0
	github.com/mcpward/mcpward/composition/internal/pgtest v0.0.0
	github.com/mcpward/mcpward/composition/shared v0.0.0
	github.com/mcpward/mcpward/conformance v0.0.0
	github.com/mcpward/mcpward/core v0.0.0
	github.com/mcpward/mcpward/ports v0.0.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	github.com/stretchr/testify v1.12.1
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp v1.47.0
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp v1.47.0
	go.opentelemetry.io/otel/exporters/stdout/stdoutmetric v1.47.0
	go.opentelemetry.io/otel/exporters/stdout/stdouttrace v1.47.0
	go.opentelemetry.io/otel/metric v1.47.0
	go.opentelemetry.io/otel/sdk v1.47.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.13.0
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	golang.org/x/text v0.42.0 // indirect
)

require (
	github.com/99designs/go-keychain v0.0.0-20191008050251-8e49817e8af4 // indirect
	github.com/99designs/keyring v1.2.2 // indirect
	github.com/cenkalti/backoff/v5 v5.0.3 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/danieljoos/wincred v1.1.2 // indirect
	github.com/dvsekhvalnov/jose2go v1.5.0 // indirect
	github.com/go-jose/go-jose/v4 v4.1.9 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/godbus/dbus v0.0.0-20190726142602-4481cbc300e2 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/google/wire v0.7.0 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.30.0 // indirect
	github.com/gsterjov/go-libsecret v0.0.0-20161001094733-a6f4afe4910c // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mcpward/mcpward/adapters/filestore v0.0.0 // indirect
	github.com/mcpward/mcpward/adapters/internal/jsonrpcwire v0.0.0 // indirect
	github.com/mcpward/mcpward/adapters/keychainstore v0.0.0 // indirect
	github.com/mcpward/mcpward/adapters/mcpsession v0.0.0 // indirect
	github.com/mtibben/percent v0.2.1 // indirect
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/proto/otlp v1.11.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.59.0 // indirect
	golang.org/x/oauth2 v0.36.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/term v0.46.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260928230214-8a89bd6388cc // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260928230214-8a89bd6388cc // indirect
	google.golang.org/grpc v1.83.2 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/mcpward/mcpward/adapters/pgstore => ../../../adapters/pgstore
