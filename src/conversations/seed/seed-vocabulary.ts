/**
 * Words for synthetic conversation titles, per panel language: a head of common shopping words
 * and a generated long tail (product and brand-like names), so keyword searches range from
 * very common to very rare. Deterministic: the same words every run.
 */
const HEAD: Record<string, string[]> = {
  en: ['order', 'delivery', 'return', 'size', 'shoes', 'jacket', 'refund', 'price', 'discount', 'stock', 'color', 'shipping', 'warranty', 'dress', 'laptop', 'phone', 'gift', 'payment', 'account', 'invoice', 'cart', 'exchange', 'tracking', 'store', 'coupon', 'sofa', 'lamp', 'bike', 'watch', 'bag', 'jeans', 'shirt', 'coat', 'battery', 'charger', 'recipe', 'organic', 'wine', 'coffee', 'toys'],
  fr: ['commande', 'livraison', 'retour', 'taille', 'chaussures', 'veste', 'remboursement', 'prix', 'remise', 'stock', 'couleur', 'expédition', 'garantie', 'robe', 'ordinateur', 'téléphone', 'cadeau', 'paiement', 'compte', 'facture', 'panier', 'échange', 'suivi', 'magasin', 'bon', 'canapé', 'lampe', 'vélo', 'montre', 'sac', 'jean', 'chemise', 'manteau', 'batterie', 'chargeur', 'recette', 'bio', 'vin', 'café', 'jouets'],
  de: ['bestellung', 'lieferung', 'rücksendung', 'größe', 'schuhe', 'jacke', 'erstattung', 'preis', 'rabatt', 'lager', 'farbe', 'versand', 'garantie', 'kleid', 'laptop', 'handy', 'geschenk', 'zahlung', 'konto', 'rechnung', 'warenkorb', 'umtausch', 'sendungsverfolgung', 'filiale', 'gutschein', 'sofa', 'lampe', 'fahrrad', 'uhr', 'tasche', 'jeans', 'hemd', 'mantel', 'akku', 'ladegerät', 'rezept', 'bio', 'wein', 'kaffee', 'spielzeug'],
  it: ['ordine', 'consegna', 'reso', 'taglia', 'scarpe', 'giacca', 'rimborso', 'prezzo', 'sconto', 'disponibilità', 'colore', 'spedizione', 'garanzia', 'vestito', 'portatile', 'telefono', 'regalo', 'pagamento', 'account', 'fattura', 'carrello', 'cambio', 'tracciamento', 'negozio', 'buono', 'divano', 'lampada', 'bici', 'orologio', 'borsa', 'jeans', 'camicia', 'cappotto', 'batteria', 'caricatore', 'ricetta', 'biologico', 'vino', 'caffè', 'giocattoli'],
  es: ['pedido', 'entrega', 'devolución', 'talla', 'zapatos', 'chaqueta', 'reembolso', 'precio', 'descuento', 'existencias', 'color', 'envío', 'garantía', 'vestido', 'portátil', 'teléfono', 'regalo', 'pago', 'cuenta', 'factura', 'carrito', 'cambio', 'seguimiento', 'tienda', 'cupón', 'sofá', 'lámpara', 'bicicleta', 'reloj', 'bolso', 'vaqueros', 'camisa', 'abrigo', 'batería', 'cargador', 'receta', 'ecológico', 'vino', 'café', 'juguetes'],
  nl: ['bestelling', 'levering', 'retour', 'maat', 'schoenen', 'jas', 'terugbetaling', 'prijs', 'korting', 'voorraad', 'kleur', 'verzending', 'garantie', 'jurk', 'laptop', 'telefoon', 'cadeau', 'betaling', 'account', 'factuur', 'winkelwagen', 'ruilen', 'volgen', 'winkel', 'kortingsbon', 'bank', 'lamp', 'fiets', 'horloge', 'tas', 'spijkerbroek', 'overhemd', 'mantel', 'batterij', 'oplader', 'recept', 'biologisch', 'wijn', 'koffie', 'speelgoed'],
};

const SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'ven', 'tor', 'zu', 'bel', 'dan', 'sor', 'qui', 'fe', 'no', 'lux', 'tri', 'pa', 'ge', 'xo', 'ri', 'mon', 'sta', 'vi', 'del', 'ar'];

/** A small deterministic pseudo-random generator (mulberry32). */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Head words first, then `tail` invented names: index order is frequency order for the seed. */
export function titleWords(language: string, tail = 20000): string[] {
  const random = generator([...language].reduce((s, c) => s * 31 + c.charCodeAt(0), 7));
  const words = new Set(HEAD[language]);
  while (words.size < HEAD[language].length + tail) {
    const parts = 2 + Math.floor(random() * 2);
    let word = '';
    for (let i = 0; i < parts; i++) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    if (random() < 0.15) word += `${Math.floor(random() * 900) + 100}`;
    words.add(word);
  }
  return [...words];
}

export const SEED_LANGUAGES = ['fr', 'en', 'de', 'it', 'es', 'nl'] as const;
