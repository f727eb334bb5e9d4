module opkit.dev/tools/runc-shim

go 1.23
