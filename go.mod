module github.com/mpiscope/mpiscope

go 1.23
