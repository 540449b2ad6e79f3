module github.com/mpiscope/mpiscope

go 1.23

require github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
