// Model output as React elements: a small markdown subset (paragraphs, `- ` lists, `> ` quotes, fenced
// code, `inline code`, **bold**). Everything becomes text nodes; no HTML from the model ever reaches the
// DOM (no dangerouslySetInnerHTML, no links), so a reply containing <script> or <img onerror> is shown
// as the characters it is.

function inline(text, keyPrefix) {
	const out = [];
	const re = /(`[^`\n]+`|\*\*[^*\n]+\*\*)/g;
	let last = 0;
	let m;
	let i = 0;
	while ((m = re.exec(text))) {
		if (m.index > last) out.push(text.slice(last, m.index));
		const token = m[0];
		if (token.startsWith("`")) out.push(<code key={`${keyPrefix}-${i++}`}>{token.slice(1, -1)}</code>);
		else out.push(<strong key={`${keyPrefix}-${i++}`}>{token.slice(2, -2)}</strong>);
		last = m.index + token.length;
	}
	if (last < text.length) out.push(text.slice(last));
	return out;
}

function parseBlocks(source) {
	const lines = source.replace(/\r\n?/g, "\n").split("\n");
	const blocks = [];
	let i = 0;
	while (i < lines.length) {
		const line = lines[i];
		if (/^```/.test(line)) {
			const body = [];
			i++;
			while (i < lines.length && !/^```/.test(lines[i])) body.push(lines[i++]);
			i++; // closing fence (or the end while streaming)
			blocks.push({ type: "code", text: body.join("\n") });
		} else if (/^\s*[-*] /.test(line)) {
			const items = [];
			while (i < lines.length && /^\s*[-*] /.test(lines[i])) items.push(lines[i++].replace(/^\s*[-*] /, ""));
			blocks.push({ type: "list", items });
		} else if (/^> ?/.test(line)) {
			const body = [];
			while (i < lines.length && /^> ?/.test(lines[i])) body.push(lines[i++].replace(/^> ?/, ""));
			blocks.push({ type: "quote", text: body.join("\n") });
		} else if (line.trim() === "") {
			i++;
		} else {
			const body = [];
			while (i < lines.length && lines[i].trim() !== "" && !/^```|^\s*[-*] |^> ?/.test(lines[i])) body.push(lines[i++]);
			blocks.push({ type: "p", text: body.join("\n") });
		}
	}
	return blocks;
}

export function Markdown({ text }) {
	return (
		<div className="md">
			{parseBlocks(text ?? "").map((b, k) => {
				switch (b.type) {
					case "code":
						return (
							<pre key={k} className="code">
								<code>{b.text}</code>
							</pre>
						);
					case "list":
						return (
							<ul key={k}>
								{b.items.map((item, j) => (
									<li key={j}>{inline(item, `${k}-${j}`)}</li>
								))}
							</ul>
						);
					case "quote":
						return <blockquote key={k}>{inline(b.text, `${k}`)}</blockquote>;
					default:
						return <p key={k}>{inline(b.text, `${k}`)}</p>;
				}
			})}
		</div>
	);
}
