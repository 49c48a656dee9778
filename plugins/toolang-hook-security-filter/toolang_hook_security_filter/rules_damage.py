"""Blocking rules against damage: deleting, wiping, killing, breaking the boot.

See :mod:`.rules` for how rules are written and matched."""

from __future__ import annotations

from typing import Final

from toolang_hook_security_filter.fragments import (
    ARG,
    CRITICAL,
    DEVICE,
    END,
    FIND,
    HOME,
    MKFS,
    RM,
    SUDO,
    SYSTEM_DIRS,
    WIN_CRITICAL,
    Q,
    code_writes,
    later,
    recursive,
    upto,
    w,
)
from toolang_hook_security_filter.spec import RuleSpec, alt, spec

DAMAGE: Final[tuple[RuleSpec, ...]] = (
    spec(
        "recursive-delete-of-root-or-home",
        "recursively deletes the root, a home or a system directory",
        alt(rf"{RM}{recursive('rm')}{later('rm')}(?:--\s+)?{Q}{CRITICAL}{Q}{END}", "rm"),
        alt(
            rf"rmtree(?<!\wrmtree)\(\s*(?:{Q}{CRITICAL}{Q}\s*[,)]|(?:pathlib\.)?Path\.home\(\)"
            rf"|os\.path\.expanduser\(\s*{Q}~{Q}\s*\))",
            "rmtree",
        ),
        alt(
            rf"\.rm(?:dir)?(?:Sync)?\(\s*{Q}(?:/|~){Q}\s*,[^)]*recursive",
            *("rm", "rmdir", "rmsync", "rmdirsync"),
        ),
        alt(rf"rimraf(?<!\wrimraf)\s+{Q}(?:/|~){Q}{END}", "rimraf"),
        alt(
            rf"{w('echo', 'printf')}\s+{Q}{CRITICAL}{Q}\s*\|\s*(?:sudo\s+)?xargs\s{ARG}*?"
            rf"\brm\s{recursive('rm')}",
            "xargs",
        ),
        # `cd / && rm -rf *`: the working directory's contents, right after moving there.
        alt(
            rf"{w('cd')}\s+{Q}{CRITICAL}{Q}\s*(?:&&|;|\n)\s*{SUDO}{RM}{recursive('rm')}{later('rm')}"
            rf"(?:--\s+)?{Q}(?:\.|\./|\./\*|\*|\.\*){Q}{END}",
            "cd",
        ),
        # The host's root bind-mounted into a container, and deleted there.
        alt(
            rf"{w('docker', 'podman')}\s{upto('docker', 'podman', line=True)}(?:-v|--volume)[=\s]+"
            rf"{Q}/:(/[\w.-]+)[:\s\"']{upto('docker', 'podman', line=True)}\brm\s{recursive('rm')}"
            rf"{later('rm')}{Q}\1/?\*?{Q}{END}",
            "docker",
            "podman",
        ),
        # Moving the root, a top system directory or a home away (`mv ~ /dev/null`).
        alt(
            rf"{w('mv')}\s+(?:-\S+\s+)*{Q}(?:/(?:{SYSTEM_DIRS})?|/(?:home|Users)/[^/\s\"';&|]+"
            rf"|{HOME}){Q}/?{Q}\s+\S",
            "mv",
        ),
    ),
    spec(
        "no-preserve-root",
        "deletes with --no-preserve-root",
        alt(r"--no-preserve-root\b", "preserve"),
    ),
    spec(
        "find-delete-from-root-or-home",
        "deletes every file under the root, a home or a system directory",
        alt(
            rf"{FIND}\s+{Q}(?:/(?:{SYSTEM_DIRS})?/?{Q}\s{upto('find')}"
            rf"|(?:{HOME}|/(?:home|Users)/[^/\s\"';&|]+)/?{Q}\s"
            rf"(?!{upto('find')}-i?name\s){upto('find')})"
            r"(?:-delete\b|-exec\s+(?:/bin/)?(?:rm|shred)\b)",
            "find",
        ),
    ),
    spec(
        "windows-recursive-delete",
        "recursively deletes a Windows drive, system folder or profile",
        alt(
            rf"{w('del', 'erase')}\s+(?={upto('del', 'erase')}/s\b)(?:/[a-z]\s+)*{Q}"
            rf"{WIN_CRITICAL}\\?\*?(?:\.\*)?{Q}{END}",
            "del",
            "erase",
        ),
        alt(
            rf"{w('rd', 'rmdir')}\s+(?:/[sq]\s+)+{Q}{WIN_CRITICAL}\\?{Q}{END}",
            "rd",
            "rmdir",
        ),
        alt(
            rf"{w('remove-item')}\s(?={upto('remove-item')}-Recurse){later('remove-item')}"
            rf"(?:-(?:Literal)?Path\s+)?{Q}"
            rf"(?:{WIN_CRITICAL}|~)\\?\*?{Q}{END}",
            "item",
        ),
        alt(rf"{w('format')}(?:\.com)?\s+[a-z]:(?=\s|$|/)", "format"),
    ),
    # The structured form: a tool named like a delete, given the root or a home.
    spec(
        "delete-tool-on-root-or-home",
        "asks a delete tool to remove the root, a home or a system directory",
        alt(rf"\A\s*{Q}{CRITICAL}{Q}\s*\Z"),
        tools=r"(?:^|[_.-])(?:delete|remove|rm|rmdir|rmtree|unlink|wipe|erase|purge)(?:$|[_.-])",
    ),
    # The structured form of overwriting an account or boot file: whatever the content,
    # the path alone decides (a file write is a mapping holding a path and a content).
    spec(
        "write-tool-on-system-file",
        "asks a file-writing tool to overwrite a system account, sudo, boot or SSH access file",
        alt(
            rf"\A\s*{Q}(?:/etc/(?:passwd|g?shadow|group|sudoers(?:\.d/\S*)?|ld\.so\.preload"
            rf"|pam\.d/\S+)|/boot/\S+|(?:{HOME}|/root|/home/[^/\s]+|/Users/[^/\s]+)?/?"
            rf"\.ssh/authorized_keys2?){Q}\s*\Z",
            "etc",
            "boot",
            "authorized",
        ),
        written_path=True,
    ),
    spec(
        "disk-format",
        "formats or wipes a disk or partition",
        alt(
            rf"{w(*MKFS)}(?:\.\w+)?\b"
            rf"{upto(*MKFS)}\s{Q}/dev/(?!null\b|zero\b|loop\d)",
            "mkfs",
            "mke",
            "mkswap",
            "wipefs",
            "blkdiscard",
        ),
        alt(rf"{w('sgdisk')}\s{upto('sgdisk')}(?:--zap|-Z\b|--clear\b|-o\b)", "sgdisk"),
        alt(rf"{w('fdisk')}\s+(?!-l\b){upto('fdisk')}/dev/", "fdisk"),
        alt(
            rf"{w('parted')}\s{upto('parted')}/dev/\S+{upto('parted')}\b(?:mklabel|rm)\b",
            "parted",
        ),
        alt(
            rf"{w('diskutil')}\s+"
            r"(?:eraseDisk|eraseVolume|zeroDisk|secureErase|partitionDisk|reformat)\b",
            "diskutil",
        ),
        alt(rf"{w('format-volume', 'clear-disk', 'initialize-disk')}\b", "volume", "disk"),
        alt(rf"{w('sfdisk')}\s{upto('sfdisk')}--delete\b", "sfdisk"),
        alt(rf"{w('hdparm')}\s{upto('hdparm')}--(?:security-erase|user-master)\b", "hdparm"),
        # A diskpart script, inline or written to a file: select a disk, then wipe it.
        alt(rf"{w('select')}\s+disk\s+\d+\b[\s\S]{{0,200}}?\bclean\b", "disk"),
    ),
    spec(
        "raw-device-write",
        "writes directly to a disk device",
        alt(
            rf"{w('dd')}\s{upto('dd')}\bof={Q}/dev/(?!null\b|zero\b|stdout\b|stderr\b|fd/)",
            "dev",
        ),
        alt(rf">\s*{Q}{DEVICE}", "dev"),
        alt(rf"{w('shred', 'wipe', 'tee')}\s{later('shred', 'wipe', 'tee')}{Q}{DEVICE}", "dev"),
        alt(rf"{w('cp')}\s{upto('cp')}\s{Q}{DEVICE}\w*{Q}\s*(?:$|[;&|])", "dev"),
        alt(rf"{w('echo')}\s+[bcoe]\s*>\s*/proc/sysrq-trigger", "sysrq"),
        # From code: `open('/dev/sda', 'wb')`, `os.open(…, os.O_WRONLY)`, `fs.writeFileSync`.
        alt(
            rf"open\(\s*{Q}{DEVICE}\w*{Q}\s*,\s*(?:mode\s*=\s*)?"
            rf"(?:{Q}[rabxt]*[wa+]|[^)\n]*\bo_(?:wronly|rdwr)\b)",
            "dev",
        ),
        alt(
            rf"{w('writefile', 'writefilesync', 'createwritestream', 'appendfilesync')}"
            rf"\(\s*{Q}{DEVICE}",
            "dev",
        ),
    ),
    spec(
        "fork-bomb",
        "is a fork bomb",
        # `:(){ :|:& };:` and `bomb() { bomb | bomb & }; bomb`, found from the `){`.
        alt(r"\)\s*\{\s*([\w:.]+)\s*\|\s*\1\s*&", "{"),
        alt(r"%0\s*\|\s*%0", "%0"),
        alt(rf"{w('fork')}\s+while\s+fork\b", "fork"),
        alt(
            rf"{w('while')}\s*\(?\s*(?:1|true)\s*\)?\s*(?::|\{{|;|\bdo\b)?\s*(?:os\.)?fork\s*\(",
            "fork",
        ),
        alt(rf"{w('for')}\s*\(\s*;\s*;\s*\)\s*\{{?\s*fork\s*\(", "fork"),
        alt(rf"{w('loop')}\s*\{{\s*fork\b", "fork"),
        # A batch file that starts itself again (`start %0`, `start "" "%~f0"`).
        alt(rf"{w('start')}\s+(?:/\w+\s+)*(?:\"\"\s+)?{Q}%(?:~[a-z]*)?0\b", "start"),
    ),
    spec(
        "boot-tampering",
        "overwrites the boot loader, the kernel or the boot configuration",
        # Appending (`>>`, `tee -a`) passes: Raspberry Pi's /boot/config.txt is edited so.
        alt(rf">(?<![>\d&]>)(?!>)\s*{Q}/boot/", "boot"),
        alt(rf"{w('tee')}\s+(?!-a\b|--append\b){upto('tee')}{Q}/boot/", "boot"),
        alt(rf"{w('dd', 'truncate', 'shred')}\s{upto('dd', 'truncate', 'shred')}/boot/", "boot"),
        alt(code_writes(r"/boot/[^\s'\"]+"), "boot"),
        alt(rf"{w('bcdedit')}(?:\.exe)?\s+(?:/store\s+\S+\s+)?/delete(?:value)?\b", "bcdedit"),
        alt(
            rf"{w('bcdedit')}(?:\.exe)?\s{upto('bcdedit', line=True)}"
            r"(?:recoveryenabled\s+(?:no|off|false|0)\b|bootstatuspolicy\s+ignoreallfailures\b)",
            "bcdedit",
        ),
    ),
    spec(
        "kill-everything",
        "kills every process or shuts the machine down",
        alt(
            rf"{w('kill')}\s+(?:-(?:9|KILL|SIGKILL|TERM|15)\s+|-s\s+\w+\s+)?-1(?=\s*(?:$|[;&|)]))",
            "kill",
        ),
        alt(rf"{w('kill')}\s+-(?:9|KILL|SIGKILL)\s+1(?=\s*(?:$|[;&|)]))", "kill"),
        alt(
            r"(?:^|[;&|({\n`]|\bsudo|\bexec|\b(?:ba)?sh\s+-c\s+[\"']?)\s*(?:/usr)?(?:/s?bin/)?"
            r"(?:shutdown|poweroff|halt|reboot)(?:\.exe)?"
            r"(?!\s+(?:-[ck]|/a|--help)\b)"  # cancel, abort, only warn
            r"(?=\s*(?:$|[;&|\"'`)\n]|-{1,2}\w|now\b|\+\d|\d{1,2}:\d\d|/[srpt]\b))",
            "shutdown",
            "poweroff",
            "halt",
            "reboot",
        ),
        alt(rf"{w('init', 'telinit')}\s+[06]\b", "init", "telinit"),
        alt(rf"{w('systemctl')}\s+(?:poweroff|reboot|halt|kexec)\b", "systemctl"),
        alt(rf"{w('stop-computer', 'restart-computer', 'killall5')}\b", "computer", "killall"),
        alt(
            rf"{w('taskkill')}(?:\.exe)?\s{upto('taskkill')}/im\s+{Q}\*(?:\.\*|\.exe)?{Q}{END}",
            "taskkill",
        ),
        alt(
            rf"{w('wmic')}\s+os\b{upto('wmic')}\bcall\s+(?:shutdown|reboot|win32shutdown)\b", "wmic"
        ),
        # Every process by name: the pattern `.` matches all of them.
        alt(rf"{w('pkill', 'killall')}\s+(?:-\S+\s+)*{Q}\.\*?{Q}{END}", "pkill", "killall"),
        alt(rf"{w('get-process', 'gps')}\s*\|\s*(?:Stop-Process|spps|kill)\b", "process", "gps"),
    ),
    spec(
        "crontab-wipe",
        "removes every scheduled job of the user",
        alt(rf"{w('crontab')}\s+(?:-u\s+\S+\s+)?-r\b", "crontab"),
        # Installing an empty table: `crontab /dev/null`, `echo "" | crontab -`.
        alt(rf"{w('crontab')}\s+(?:-u\s+\S+\s+)?(?:-\s*)?<?\s*{Q}/dev/null{Q}{END}", "crontab"),
        alt(
            rf"(?:{w('echo')}(?:\s+-n)?(?:\s+(?:\"\"|''))?|{w('printf')}\s+(?:\"\"|'')|{w('true')}|:"
            rf"|{w('cat')}\s+/dev/null)\s*\|\s*(?:sudo\s+)?crontab\s+(?:-u\s+\S+\s+)?-"
            r"(?=\s*(?:$|[;&|)\n]))",
            "crontab",
        ),
        alt(r">(?<![>\d&]>)(?!>)\s*[\"']?(?:/var/spool/cron/|/etc/crontab\b)", "spool", "crontab"),
        alt(
            rf"{RM}(?:-\S+\s+)*{Q}(?:/etc/cron\.(?:d|daily|hourly|weekly|monthly)/?\*?|/etc/crontab"
            rf"|/var/spool/cron(?:/crontabs)?/?[^\s\"';&|]*){Q}{END}",
            "cron",
            "crontab",
        ),
    ),
    spec(
        "backup-deletion",
        "deletes the system's shadow copies or backups (what ransomware does first)",
        alt(
            rf"{w('vssadmin')}(?:\.exe)?\s+(?:delete\s+shadows|resize\s+shadowstorage)\b",
            "vssadmin",
        ),
        alt(rf"{w('wmic')}(?:\.exe)?\s+shadowcopy\s+delete\b", "wmic"),
        alt(
            rf"{w('wbadmin')}(?:\.exe)?\s+delete\s+(?:catalog|systemstatebackup|backup)\b",
            "wbadmin",
        ),
        alt(
            r"win32_shadowcopy\b[^\n]{0,200}?(?:\.delete\(|remove-(?:wmi|cim)object\b)",
            "shadowcopy",
        ),
    ),
    spec(
        "drop-database",
        "drops or empties a whole database or schema",
        alt(rf"{w('drop')}\s+(?:database|schema)\b", "drop"),
        alt(rf"{w('dropdb')}\s", "dropdb"),
        alt(rf"{w('flushall', 'flushdb')}\b", "flushall", "flushdb"),
        alt(r"\.dropdatabase\(", "dropdatabase"),
    ),
)
