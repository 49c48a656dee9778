"""Every run registers the team tools; few call one: registering them imports no
coordinator (nor the pool and health code under it)."""

from __future__ import annotations

import subprocess
import sys


def test_registering_the_team_tools_imports_no_coordinator():
    probe = (
        "import sys\n"
        "from toolang_teams import toolang_register_tools\n"
        "tools = []\n"
        "toolang_register_tools(tools.append)\n"
        "assert {t.name for t in tools} >= {'team_form', 'team_delegate'}, tools\n"
        "print('\\n'.join(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    modules = set(out.stdout.split())
    assert "toolang_teams.tools" in modules
    assert "toolang_teams.coordinator" not in modules
