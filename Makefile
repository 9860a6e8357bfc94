# The README's commands. Each target does its own set-up, so each works on a fresh machine.
.PHONY: demo test check notebooks neo4j-start neo4j-stop bench

demo:           ## set up and run the multi-agent demo on the embedded store
	scripts/demo

test:           ## set up, lint, type-check, start Neo4j, run the whole test suite, stop Neo4j
	scripts/test

check:          ## ruff format --check, ruff check, mypy
	scripts/check

notebooks:      ## execute the notebooks into notebooks/_build/*.html; regenerate docs/img/*.png
	scripts/notebooks

neo4j-start:    ## run a local Neo4j Community from Maven Central jars (no Docker)
	scripts/neo4j-local start

neo4j-stop:
	scripts/neo4j-local stop
