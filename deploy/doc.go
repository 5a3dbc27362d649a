// Package deploy holds the Kubernetes manifests for running workers on a
// cluster with KEDA (see README.md in this directory). It has no code: its
// tests check these manifests, ../docker-compose.yml, ../Dockerfile and the
// command lines in ../README.md and ../docs/*.md against the code they run
// — resource names, flags and environment variables — so a rename in the
// code fails make test instead of a deployment.
package deploy
