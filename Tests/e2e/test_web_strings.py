"""The web pages' string tables: every key exists in Chinese and in English, and every key the
code asks for by name exists (a missing one would show the key itself on screen)."""
import pathlib
import re

WEB = pathlib.Path(__file__).resolve().parents[2] / "web"
KEY = re.compile(r"^\s*'([^']+)':\s", re.MULTILINE)


def table(language):
    return KEY.findall((WEB / "js" / "strings" / f"{language}.js").read_text(encoding="utf-8"))


def test_chinese_and_english_have_the_same_keys_once_each():
    zh, en = table("zh"), table("en")
    assert len(zh) == len(set(zh)), [k for k in zh if zh.count(k) > 1]
    assert len(en) == len(set(en)), [k for k in en if en.count(k) > 1]
    assert set(zh) == set(en), {"only in zh": sorted(set(zh) - set(en)), "only in en": sorted(set(en) - set(zh))}


def test_every_key_the_pages_ask_for_is_in_the_tables():
    known = set(table("zh"))
    asked = set()
    for path in (WEB / "js").rglob("*.js"):
        if path.parent.name == "strings":
            continue
        source = path.read_text(encoding="utf-8")
        asked.update((key, path.name) for key in re.findall(r"\bt\(\s*'([^']+)'", source))
        for a, b in re.findall(r"\bt\([^()']*\?\s*'([^']+)'\s*:\s*'([^']+)'", source):
            asked.update({(a, path.name), (b, path.name)})
    missing = sorted((key, name) for key, name in asked if key not in known)
    assert not missing, missing
    assert len(asked) > 200


def test_pages_carry_no_inline_script_or_style_and_load_nothing_from_elsewhere():
    for path in list(WEB.rglob("*.html")) + list(WEB.rglob("*.js")) + list(WEB.rglob("*.css")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text), path
        if path.suffix == ".html":
            assert not re.search(r"<script(?![^>]*\bsrc=)", text), path
            assert "<style" not in text and " style=" not in text and not re.search(r"\son\w+=", text), path
        if path.suffix == ".js":
            assert "innerHTML" not in text and "eval(" not in text and ".setAttribute('style'" not in text, path
