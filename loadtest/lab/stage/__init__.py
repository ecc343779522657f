"""What is started where: the services and their stacks, the networks and hosts between them, TLS, and services
measured where someone else runs them (TARGET)."""
