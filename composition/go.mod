module github.com/mcpward/mcpward/composition

go 1.26.0

require (
	github.com/google/wire v0.7.0
	github.com/mcpward/mcpward/adapters/filestore v0.0.0
	github.com/mcpward/mcpward/adapters/httptransport v0.0.0
	github.com/mcpward/mcpward/adapters/mcpsession v0.0.0
	github.com/mcpward/mcpward/adapters/memstore v0.0.0-00010101000000-000000000000
	github.com/mcpward/mcpward/adapters/oauth v0.0.0
	github.com/mcpward/mcpward/adapters/stdiotransport v0.0.0
	github.com/mcpward/mcpward/core v0.0.0
	github.com/mcpward/mcpward/ports v0.0.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/stretchr/testify v1.12.1
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/metric v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-jose/go-jose/v4 v4.1.9 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/subcommands v1.2.0 // indirect
	github.com/mcpward/mcpward/adapters/internal/jsonrpcwire v0.0.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/mod v0.38.0 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	golang.org/x/tools v0.48.0 // indirect
)

replace (
	github.com/mcpward/mcpward/adapters/filestore => ../adapters/filestore
	github.com/mcpward/mcpward/adapters/httptransport => ../adapters/httptransport
	github.com/mcpward/mcpward/adapters/internal/jsonrpcwire => ../adapters/internal/jsonrpcwire
	github.com/mcpward/mcpward/adapters/mcpsession => ../adapters/mcpsession
	github.com/mcpward/mcpward/adapters/memstore => ../adapters/memstore
	github.com/mcpward/mcpward/adapters/oauth => ../adapters/oauth
	github.com/mcpward/mcpward/adapters/stdiotransport => ../adapters/stdiotransport
	github.com/mcpward/mcpward/conformance => ../conformance
	github.com/mcpward/mcpward/core => ../core
	github.com/mcpward/mcpward/ports => ../ports
)

tool github.com/google/wire/cmd/wire
