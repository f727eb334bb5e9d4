module opkit.dev/tools/pause

go 1.23
