"""toolang_register_routes: routes collected per plugin, all or nothing, clashes refused."""

from __future__ import annotations

from toolang_core import hookimpl
from toolang_core.plugins.host import PluginHost


def plugin(**hooks):
    namespace = {name: staticmethod(hookimpl(fn)) for name, fn in hooks.items()}
    return type("TestPlugin", (), namespace)()


async def hello(request):
    """Say hello."""


def host_with(**plugins):
    host = PluginHost()
    for name, p in plugins.items():
        host.register(p, name)
    return host


def test_routes_are_collected_with_their_plugin_methods_and_summary():
    def routes(register):
        register("/hello", hello)
        register("/things/{thing_id}", hello, methods=("post", "DELETE"), summary="things")

    found, failures = host_with(
        alpha=plugin(toolang_register_routes=routes)
    ).hooks.register_routes()
    assert failures == []
    assert [(r.path, r.methods, r.plugin, r.summary) for r in found] == [
        ("/hello", ("GET",), "alpha", "Say hello."),
        ("/things/{thing_id}", ("POST", "DELETE"), "alpha", "things"),
    ]


def test_a_taken_route_fails_the_later_plugin_as_a_whole():
    def first(register):
        register("/a", hello)
        register("/hello", hello)

    def second(register):
        register("/b", hello)
        register("/hello", hello)

    host = host_with(
        a=plugin(toolang_register_routes=first), b=plugin(toolang_register_routes=second)
    )
    found, failures = host.hooks.register_routes()
    owners = {r.plugin for r in found}
    # The plugin asked first keeps the path; the other mounts nothing at all.
    assert len(owners) == 1 and len(found) == 2
    [failure] = failures
    assert failure.hook == "toolang_register_routes"
    assert "GET /hello is already registered by plugin" in failure.error
    assert failure.plugin not in owners


def test_bad_routes_are_refused_naming_what_was_expected():
    cases = {
        "nopath": (lambda register: register("hello", hello), "must start with '/'"),
        "verb": (lambda register: register("/x", hello, methods=("FETCH",)), "methods must be"),
        "notcallable": (lambda register: register("/x", "hello"), "must be callable"),
    }
    for name, (impl, message) in cases.items():
        found, failures = host_with(
            **{name: plugin(toolang_register_routes=impl)}
        ).hooks.register_routes()
        assert found == [], name
        assert message in failures[0].error, (name, failures[0].error)


def test_a_raising_plugin_does_not_cost_the_others_their_routes():
    def broken(register):
        raise RuntimeError("boom")

    def good(register):
        register("/ok", hello)

    host = host_with(
        broken=plugin(toolang_register_routes=broken), good=plugin(toolang_register_routes=good)
    )
    found, failures = host.hooks.register_routes()
    assert [r.path for r in found] == ["/ok"]
    assert [f.plugin for f in failures] == ["broken"] and "boom" in failures[0].error


def test_route_servers_are_the_plugins_that_say_they_serve_the_routes_in_this_run():
    def serves(runtime):
        return "http://127.0.0.1:8765"

    def broken(runtime):
        raise RuntimeError("settings unreadable")

    host = host_with(
        installed=plugin(toolang_serves_routes=lambda runtime: None),
        broken=plugin(toolang_serves_routes=broken),
        server=plugin(toolang_serves_routes=serves),
    )
    # installed but not serving says None; one that raises is skipped, not fatal
    assert host.hooks.route_servers(runtime=object()) == [("server", "http://127.0.0.1:8765")]
