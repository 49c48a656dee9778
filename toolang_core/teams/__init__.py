"""Teams: a leader and members from the agent pool working one goal (docs/teams.md)."""
