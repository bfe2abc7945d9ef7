module github.com/mcpward/mcpward/ports

go 1.26
