module github.com/execlab/executor

go 1.26
