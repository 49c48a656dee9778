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
    HOME_KEY_DIR,
    MKFS,
    RM,
    SUDO,
    SYSTEM_DIRS,
    WIN_CRITICAL,
    WINDOWS_CRITICAL_PROCESSES,
    Q,
    code_writes,
    later,
    recursive,
    upto,
    w,
)
from toolang_hook_security_filter.spec import RuleSpec, alt, spec

COPIES = ("mv", "cp", "install", "ln", "rsync")
TASK_REMOVERS = ("unregister-scheduledtask", "disable-scheduledtask")

DAMAGE: Final[tuple[RuleSpec, ...]] = (
    spec(
        "recursive-delete-of-root-or-home",
        "recursively deletes the root, a home or a system directory",
        alt(rf"{RM}{recursive('rm')}{later('rm')}(?:--\s+)?{Q}{CRITICAL}{Q}{END}", "rm"),
        # A home's keys and credentials (`rm -rf ~/.ssh ~/.gnupg`): nothing fetches them again.
        alt(rf"{RM}{recursive('rm')}{later('rm')}(?:--\s+)?{Q}{HOME_KEY_DIR}{Q}{END}", "rm"),
        # Shredding (`shred`, `srm`, `wipe`) the root, a system directory or the accounts.
        alt(
            rf"{w('shred', 'srm', 'wipe')}\s{later('shred', 'srm', 'wipe')}{Q}"
            rf"(?:{CRITICAL}|/etc/(?:passwd|g?shadow|group|sudoers)){Q}{END}",
            "shred",
            "srm",
            "wipe",
        ),
        alt(
            rf"rmtree(?<!\wrmtree)\(\s*(?:{Q}{CRITICAL}{Q}\s*[,)]|(?:pathlib\.)?Path\.home\(\)"
            rf"|os\.path\.expanduser\(\s*{Q}~{Q}\s*\))",
            "rmtree",
        ),
        alt(
            rf"\.rm(?:dir)?(?:Sync)?\(\s*{Q}{CRITICAL}{Q}\s*,[^)]*recursive",
            *("rm", "rmdir", "rmsync", "rmdirsync"),
        ),
        # Ruby's FileUtils, Perl's File::Path, Go's os.RemoveAll (Ruby needs no brackets).
        alt(
            r"(?:fileutils\.(?:rm_rf|rm_r|rmtree|remove_dir|remove_entry(?:_secure)?)"
            rf"|(?<![\w.])remove_tree|(?<!\w)os\.removeall)\s*\(?\s*{Q}{CRITICAL}{Q}"
            r"(?=\s*(?:[,);'\"]|$))",
            "fileutils",
            "tree",
            "removeall",
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
        # Listing a drive, system folder or profile into a delete: everything in it goes
        # (`Get-ChildItem $env:USERPROFILE | Remove-Item -Recurse`); a -Filter passes.
        alt(
            rf"{w('get-childitem', 'gci', 'ls', 'dir')}\s+(?:-(?:Literal)?Path\s+)?{Q}"
            rf"(?:{WIN_CRITICAL}|~)\\?\*?{Q}(?![^|\n]*-(?:filter|include)\b)[^|\n]*\|\s*"
            r"(?:remove-item|ri|rm|del|erase|rd|rmdir)\b",
            *("item", "ri", "rm", "del", "erase", "rd", "rmdir"),
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
        # Windows' free-space wipe of a whole drive: what was deleted cannot come back.
        alt(rf"{w('cipher')}(?:\.exe)?\s{upto('cipher')}/w:{Q}[a-z]:\\?{Q}{END}", "cipher"),
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
        # A shell loop starting the script itself in the background (`while :; do $0 & done`).
        alt(
            rf"{w('while', 'until', 'for')}\s[\s\S]{{0,80}}?\bdo\s+(?:(?:ba|z|da|k)?sh\s+)?"
            r"[\"']?\$(?:0|\{0\})[\"']?\s*&(?!&)",
            "while",
            "until",
            "for",
        ),
        # A PowerShell loop starting itself (or another shell) again and again, with no wait.
        alt(
            rf"(?:{w('while')}\s*\(\s*(?:\$true|1)\s*\)|{w('for')}\s*\(\s*;\s*;\s*\))\s*\{{"
            r"(?=[^}]{0,80}?\b(?:start-process|saps|start)\s[^}]{0,160}?"
            r"(?:\$myinvocation\b|\$pscommandpath\b|\b(?:powershell|pwsh|cmd)(?:\.exe)?\b))"
            r"(?![^}]{0,300}?(?:-wait\b|\bsleep\b|start-sleep\b|wait-process\b))",
            "while",
            "for",
        ),
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
        # Copying or moving a file onto /boot (`mv grub.cfg /boot/grub/grub.cfg`).
        alt(
            rf"{w(*COPIES)}\s{upto(*COPIES)}\s{Q}/boot/[^\s\"';&|]*{Q}\s*(?=$|[;&|)\n])",
            "boot",
        ),
        # Deleting the kernels, the initial ramdisks or the boot loader's configuration.
        alt(
            rf"(?:{RM}|{w('unlink', 'shred')}\s){later('rm', 'unlink', 'shred')}{Q}/boot/"
            r"(?:\*|(?:vmlinuz|initrd|initramfs|bzimage|kernel)[^\s\"';&|/]*\*[^\s\"';&|/]*"
            rf"|vmlinuz|initrd\.img|bzimage|grub2?/grub\.cfg){Q}{END}",
            "boot",
        ),
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
            rf"{w('taskkill')}(?:\.exe)?\s{upto('taskkill')}/im\s+{Q}"
            rf"(?:\*(?:\.\*|\.exe)?|{WINDOWS_CRITICAL_PROCESSES}(?:\.exe)?){Q}{END}",
            "taskkill",
        ),
        alt(
            rf"{w('stop-process', 'spps', 'kill')}\s{upto('stop-process', 'spps', 'kill')}"
            rf"-(?:Name|ProcessName)\s+{Q}{WINDOWS_CRITICAL_PROCESSES}\b",
            "process",
            "spps",
            "kill",
        ),
        alt(
            rf"{w('get-process', 'gps')}\s+(?:-Name\s+)?{Q}{WINDOWS_CRITICAL_PROCESSES}\b"
            r"[^|\n]*\|\s*(?:Stop-Process|spps|kill)\b",
            "process",
            "gps",
        ),
        # Every process of root (`pkill -9 -u root`): no name left to narrow it down.
        alt(
            rf"{w('pkill', 'killall', 'slay')}\s+(?:-\S+\s+)*?-u\s*{Q}(?:root|0){Q}"
            r"(?:\s+-\S+)*\s*(?=$|[;&|)\n])",
            "pkill",
            "killall",
            "slay",
        ),
        alt(
            rf"{w('kill')}\s+(?:-\S+\s+)*\$\(\s*pgrep\s+(?:-\S+\s+)*-u\s*{Q}(?:root|0){Q}\s*\)",
            "kill",
        ),
        # The kernel's magic keys: crash, reboot, power off, kill every process.
        alt(
            rf"{w('echo', 'printf')}\s+(?:-\w+\s+)*{Q}[bceiou]{Q}\s*"
            r"(?:>|\|\s*(?:sudo\s+)?tee\s+(?:-\S+\s+)*)\s*[\"']?/proc/sysrq-trigger\b",
            "sysrq",
        ),
        alt(
            rf"{w('wmic')}\s+os\b{upto('wmic')}\bcall\s+(?:shutdown|reboot|win32shutdown)\b", "wmic"
        ),
        # Every process by name: the pattern `.` matches all of them.
        alt(
            rf"{w('pkill', 'killall')}\s+(?:-\S+\s+)*{Q}(?:\.\*?|systemd|init){Q}{END}",
            "pkill",
            "killall",
        ),
        alt(rf"{w('get-process', 'gps')}\s*\|\s*(?:Stop-Process|spps|kill)\b", "process", "gps"),
    ),
    spec(
        "crontab-wipe",
        "removes every scheduled job",
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
        # at's queue, emptied (`atrm $(atq | cut -f1)`, `atq | … | xargs atrm`).
        alt(rf"{w('atrm')}\s+(?:\$\(|`)\s*atq\b", "atrm"),
        alt(rf"{w('atq')}\b[^;\n]*\|[^;\n]*?\bxargs\s+(?:-\S+\s+)*(?:sudo\s+)?atrm\b", "atrm"),
        # Every systemd timer stopped or disabled.
        alt(
            r"list-timers\b[^;\n]*\|[^;\n]*?\bxargs\s+(?:-\S+\s+)*(?:sudo\s+)?systemctl\s+"
            r"(?:--\S+\s+)*(?:disable|stop|mask)\b",
            "timers",
        ),
        alt(
            rf"{w('systemctl')}\s+(?:--\S+\s+)*(?:disable|stop|mask)\s+(?:--\S+\s+)*"
            rf"{Q}(?:\*\.timer|timers\.target){Q}{END}",
            "timer",
            "timers",
        ),
        # Windows' task scheduler: every task unregistered or deleted.
        alt(
            rf"{w('get-scheduledtask')}\s*(?:-TaskName\s+{Q}\*{Q}\s*)?\|\s*"
            r"(?:unregister|disable)-scheduledtask\b",
            "scheduledtask",
        ),
        alt(
            rf"{w(*TASK_REMOVERS)}\s{upto(*TASK_REMOVERS)}-TaskName\s+{Q}\*{Q}{END}",
            "scheduledtask",
        ),
        alt(
            rf"{w('schtasks')}(?:\.exe)?\s(?={upto('schtasks')}/(?:delete|change)\b)"
            rf"{upto('schtasks')}/tn\s+{Q}\*{Q}{END}",
            "schtasks",
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
