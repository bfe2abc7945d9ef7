module github.com/mcpward/mcpward/adapters/pgstore

go 1.26

require (
	github.com/jackc/pgx/v5 v5.13.0
	github.com/mcpward/mcpward/adapters/filestore v0.0.0
	github.com/mcpward/mcpward/conformance v0.0.0
	github.com/mcpward/mcpward/core v0.0.0
	github.com/mcpward/mcpward/ports v0.0.0
	github.com/stretchr/testify v1.11.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace (
	github.com/mcpward/mcpward/adapters/filestore => ../filestore
	github.com/mcpward/mcpward/conformance => ../../conformance
	github.com/mcpward/mcpward/core => ../../core
	github.com/mcpward/mcpward/ports => ../../ports
)
