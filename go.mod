module github.com/reversi-cloud/reversi

go 1.26
